// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "vfready/host/event_loop.hpp"

// The daemon's loop is sd-event's, in the host layer (the one file that speaks
// libsystemd); the daemon uses it by these names.
namespace vfready::daemon {

using host::Clock;
using host::EventLoop;
using host::EventSource;
using host::PollSpec;

}  // namespace vfready::daemon
