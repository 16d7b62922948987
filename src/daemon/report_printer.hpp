// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "host_roots.hpp"
#include "vfready/model/compat_table.hpp"
#include "vfready/model/config.hpp"

namespace vfready::daemon {

// --check-config's exit codes beside 0 (a pass on this host would reach READY with
// every PF ready): the configuration files are invalid (the message names file and JSON
// path), or they do not fit this host: the plan refuses them or has problems (each
// printed).
inline constexpr int kCheckInvalid = 1;
inline constexpr int kCheckProblems = 3;

// Prints the plan (--check-config): what would be written, renamed and assigned, and
// every problem a pass would meet; answers 0, kCheckInvalid or kCheckProblems.
int print_plan(const model::Config& config, const model::CompatTable& table,
               const HostRoots& roots);

}  // namespace vfready::daemon
