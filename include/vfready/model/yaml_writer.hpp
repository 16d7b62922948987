// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <nlohmann/json.hpp>
#include <string>

// JSON values as YAML block style, for `vfreadyctl -o yaml`.
namespace vfready::model {

// Mappings and sequences in block style, two spaces a level; every string double-quoted
// as JSON writes it (valid YAML, so no text from the host can be read back as another
// type or break the structure); keys plain when they are [A-Za-z0-9_.-] only.
std::string to_yaml(const nlohmann::json& value);

}  // namespace vfready::model
