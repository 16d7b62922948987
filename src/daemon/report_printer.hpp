// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "host_roots.hpp"
#include "vfready/model/compat_table.hpp"
#include "vfready/model/config.hpp"

namespace vfready::daemon {

// Prints the plan (--check-config): what would be written, renamed and assigned.
int print_plan(const model::Config& config, const model::CompatTable& table,
               const HostRoots& roots);

}  // namespace vfready::daemon
