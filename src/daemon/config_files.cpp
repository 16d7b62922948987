// SPDX-License-Identifier: Apache-2.0
#include "config_files.hpp"

#include <utility>

#include "vfready/host/config_texts.hpp"

namespace vfready::daemon {

Result<model::Config> load_config(const std::string& path) {
  auto sources = host::read_config_files(path);
  if (!sources) {
    return sources.error();
  }
  return model::parse_config(sources.value());
}

Result<model::CompatTable> load_compat_tables(const std::vector<std::string>& paths) {
  auto sources = host::read_table_files(paths);
  if (!sources) {
    return sources.error();
  }
  return model::parse_compat_table(sources.value());
}

Result<LoadedConfig> parse_config_texts(const Result<host::ConfigTexts>& texts) {
  if (!texts) {
    return texts.error();
  }
  auto config = model::parse_config(texts->config);
  if (!config) {
    return config.error();
  }
  auto table = model::parse_compat_table(texts->tables);
  if (!table) {
    return table.error();
  }
  return LoadedConfig{std::move(config).value(), std::move(table).value()};
}

}  // namespace vfready::daemon
