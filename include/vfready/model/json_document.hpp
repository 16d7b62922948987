// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "vfready/model/result.hpp"

// One JSON document of outside input (a configuration file, a drop-in, a table). Every
// error of the JSON library becomes an Error that names the file, the JSON path where
// reading stopped and what was wrong: a syntax error, a number that does not fit
// (1e400), nesting deeper than `max_depth` (checked as it is read, before anything
// recurses over it), or a key that appears twice in one object (JSON allows it, and
// which one wins is a guess).
namespace vfready::model {

inline constexpr std::size_t kMaxJsonDepth = 32;

Result<nlohmann::json> parse_json_document(const std::string& file, const std::string& text,
                                           std::size_t max_depth = kMaxJsonDepth);

}  // namespace vfready::model
