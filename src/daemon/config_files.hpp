// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include "vfready/model/compat_table.hpp"
#include "vfready/model/config.hpp"
#include "vfready/model/result.hpp"

namespace vfready::daemon {

// The config file and its drop-ins (<dir of file>/vfready.d/*.json, in name order).
Result<model::Config> load_config(const std::string& path);

// The compatibility tables: each path that exists, later ones taking precedence.
Result<model::CompatTable> load_compat_tables(const std::vector<std::string>& paths);

}  // namespace vfready::daemon
