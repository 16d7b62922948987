// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "vfready/bus/bus.hpp"

// Following vfreadyd's passes from vfreadyctl: until one has its outcome, with its STATUS
// on a terminal meanwhile.
namespace vfready::ctl {

using Clock = std::chrono::steady_clock;

// Shows `text` as the one line being rewritten on standard error, when that is a
// terminal; clear_progress() takes it away before other output.
void show_progress(const std::string& text);
void clear_progress();

// Waits until the status's passes_finished reaches `pass`. Answers the exit code: kOk
// when the node is ready after it (its STATUS printed), kFailed with the STATUS and the
// problems on stderr otherwise, kTimedOut past `until`.
int follow_pass(bus::Client& client, uint64_t pass, Clock::time_point until, double timeout_s);

}  // namespace vfready::ctl
