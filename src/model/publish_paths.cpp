// SPDX-License-Identifier: Apache-2.0
// Whether the files vfready publishes to can work: each its own, none a configuration file.
#include "publish_paths.hpp"

#include <array>
#include <filesystem>
#include <system_error>
#include <utility>

namespace vfready::model {

namespace {

// The same file: the same path once "." and ".." and doubled slashes are gone, or, where
// both exist, the same inode (a symlink, a bind mount).
bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  if (fs::path(a).lexically_normal() == fs::path(b).lexically_normal()) {
    return true;
  }
  std::error_code ec;
  return fs::equivalent(a, b, ec) && !ec;
}

}  // namespace

std::optional<std::string> publish_paths_problem(const PublishConfig& publish,
                                                 const std::vector<std::string>& config_files) {
  const std::array<std::pair<const char*, const std::optional<std::string>*>, 3> files = {{
      {"status_file", &publish.status_file},
      {"nfd_file", &publish.nfd_file},
      {"metrics_file", &publish.metrics_file},
  }};
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto& [key, path] = files[i];
    if (!*path) {
      continue;
    }
    for (const auto& config : config_files) {
      if (same_file(**path, config)) {
        return std::string("$.publish.") + key + ": \"" + **path +
               "\" is a configuration file: each write would overwrite it (choose another " +
               "path, or false for none)";
      }
    }
    for (std::size_t j = 0; j < i; ++j) {
      const auto& [other_key, other] = files[j];
      if (*other && same_file(**path, **other)) {
        return std::string("$.publish.") + key + ": \"" + **path + "\" is also " + other_key +
               ": each file needs a path of its own (or false for none)";
      }
    }
  }
  return std::nullopt;
}

}  // namespace vfready::model
