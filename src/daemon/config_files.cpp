// SPDX-License-Identifier: Apache-2.0
#include "config_files.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace vfready::daemon {

namespace fs = std::filesystem;

namespace {

Result<std::string> slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return Error{path + ": cannot be read"};
  }
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

Result<model::Config> load_config(const std::string& path) {
  std::vector<model::ConfigSource> sources;
  auto main = slurp(path);
  if (!main) {
    return main.error();
  }
  sources.push_back({path, main.value()});
  const auto dropins = fs::path(path).parent_path() / "vfready.d";
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dropins, ec)) {
    if (entry.path().extension() == ".json") {
      names.push_back(entry.path().string());
    }
  }
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    auto text = slurp(name);
    if (!text) {
      return text.error();
    }
    sources.push_back({name, text.value()});
  }
  return model::parse_config(sources);
}

Result<model::CompatTable> load_compat_tables(const std::vector<std::string>& paths) {
  std::vector<model::ConfigSource> sources;
  for (const auto& path : paths) {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      continue;
    }
    auto text = slurp(path);
    if (!text) {
      return text.error();
    }
    sources.push_back({path, text.value()});
  }
  return model::parse_compat_table(sources);
}

}  // namespace vfready::daemon
