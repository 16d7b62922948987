// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include "vfready/host/config_texts.hpp"
#include "vfready/model/compat_table.hpp"
#include "vfready/model/config.hpp"
#include "vfready/model/result.hpp"

// The configuration as vfreadyd starts with it (read where it is asked for) and as a
// reload has it (read by a reader process: host::ConfigReader).
namespace vfready::daemon {

// The config file and its drop-ins (<dir of file>/vfready.d/*.json, in name order; not
// names that begin with '.'). Each must be a regular file on a local file system.
Result<model::Config> load_config(const std::string& path);

// The compatibility tables: each path that exists, later ones taking precedence.
Result<model::CompatTable> load_compat_tables(const std::vector<std::string>& paths);

struct LoadedConfig {
  model::Config config;
  model::CompatTable table;
};
// What a reader read, parsed: the first error, of the read or of a file's content.
Result<LoadedConfig> parse_config_texts(const Result<host::ConfigTexts>& texts);

}  // namespace vfready::daemon
