// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "vfready/model/config.hpp"

namespace vfready::model {

// What is wrong with where `publish` writes, as "$.publish.<key>: ..." (nullopt: nothing):
// a file that is one of `config_files` (each write would overwrite it), or two keys on one
// file (each write would overwrite the other's).
std::optional<std::string> publish_paths_problem(const PublishConfig& publish,
                                                 const std::vector<std::string>& config_files);

}  // namespace vfready::model
