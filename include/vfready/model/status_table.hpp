// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <nlohmann/json.hpp>
#include <string>

// The status (as Describe() returns it) as a table a person reads: PFs, then their VFs
// with names, GUIDs and altnames, then every problem in full.
namespace vfready::model {

// One line per PF (state, VFs ready/there, names, problems), then every problem in full;
// `vfs`: each VF's line under its PF. `colour`: ANSI colours (for a terminal).
std::string render_status(const nlohmann::json& status, bool colour, bool vfs = false);
// One PF (as DescribePF() returns it) with its steps and timings.
std::string render_pf(const nlohmann::json& pf, bool colour);

}  // namespace vfready::model
