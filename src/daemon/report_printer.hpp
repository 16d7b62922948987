// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

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

// Prints the plan (--check-config): the files read, what would be written, renamed and
// assigned (what is there now -> what the pass makes of it), and every problem a pass
// would meet; as text or (`json`) one JSON object. Answers 0 or kCheckProblems.
int print_plan(const model::Config& config, const model::CompatTable& table, const HostRoots& roots,
               bool json);

// Prints a first configuration for this host on stdout (--generate-config), and on
// stderr what it selected and left out; answers kCheckProblems when it selected nothing.
int print_generated_config(const HostRoots& roots, const std::string& schema_path);

}  // namespace vfready::daemon
