// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "vfready/model/compat_table.hpp"
#include "vfready/model/config.hpp"
#include "vfready/model/result.hpp"

namespace vfready::daemon {

// The config file and its drop-ins (<dir of file>/vfready.d/*.json, in name order; not
// names that begin with '.'). Each must be a regular file on a local file system.
Result<model::Config> load_config(const std::string& path);

// load_config and load_compat_tables on a thread of their own, waited for at most
// `bound`: a read that does not return by then (a file system that hangs) is abandoned,
// and refused; so is another read until it returns.
Result<std::pair<model::Config, model::CompatTable>> load_config_within(
    const std::string& path, const std::vector<std::string>& compat_paths,
    std::chrono::milliseconds bound);

// The compatibility tables: each path that exists, later ones taking precedence.
Result<model::CompatTable> load_compat_tables(const std::vector<std::string>& paths);

}  // namespace vfready::daemon
