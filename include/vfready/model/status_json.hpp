// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <utility>

#include "vfready/model/status.hpp"

// The status as JSON: what Describe() returns and `vfreadyctl status --json` prints.
// Keys are snake_case and stable; docs/dbus-api.md lists them.
namespace vfready::model {

// Raised when a key changes meaning or goes; new keys may come without it.
constexpr int kStatusSchemaVersion = 2;

// The JSON text, written straight from the status (model::JsonWriter): what Describe()
// sends and the status file holds. `started_unix_ms`: the daemon's start (DaemonStatus),
// for dates of its steps; `now_unix_ms`: when the JSON is made (its "generated_at"), 0
// for none.
std::string json_text(const PfStatus& pf, int64_t started_unix_ms = 0);
std::string json_text(const DaemonStatus& status, int64_t now_unix_ms = 0);
// The same, parsed: for code that looks into it (the table, the cluster configs).
nlohmann::json to_json(const PfStatus& pf, int64_t started_unix_ms = 0);
nlohmann::json to_json(const DaemonStatus& status, int64_t now_unix_ms = 0);

// The string at `key` of a status object; `otherwise` when it is absent, not a string
// (null: unknown) or empty. What every reader of the status JSON takes its texts with.
std::string text_at(const nlohmann::json& j, const char* key, const std::string& otherwise = "");
// The number at `key`; `otherwise` when it is absent or not a number, or, for a whole T,
// not a whole number T holds (a fraction, 1e80, -1 for an unsigned T). A status file is
// input from outside: json::value() would throw on a string where a number was wanted,
// and converting a double out of T's range is undefined.
template <class T>
T number_at(const nlohmann::json& j, const char* key, T otherwise) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) {
    return otherwise;
  }
  if constexpr (std::is_floating_point_v<T>) {
    return it->template get<T>();
  } else if (it->is_number_unsigned()) {
    const auto v = it->template get<uint64_t>();
    return std::in_range<T>(v) ? static_cast<T>(v) : otherwise;
  } else if (it->is_number_integer()) {
    const auto v = it->template get<int64_t>();
    return std::in_range<T>(v) ? static_cast<T>(v) : otherwise;
  }
  return otherwise;
}
// The boolean at `key`; `otherwise` when it is absent or not true or false.
bool flag_at(const nlohmann::json& j, const char* key, bool otherwise);

// The status file's text: json_text(status, now_unix_ms) and a newline.
std::string status_file_text(const DaemonStatus& status, int64_t now_unix_ms);

// "2026-12-01T17:41:45.123Z"
std::string rfc3339(int64_t unix_ms);
// "4: ACTIVE" -> {"value": 4, "name": "ACTIVE"}; null when it does not read so.
nlohmann::json port_state_json(const std::string& text);

// The PF whose PCI address, name (given, configured or kernel's) or VF (PCI address or
// name) is `key`; nullptr if none.
const PfStatus* find_pf(const DaemonStatus& status, const std::string& key);
// The same lookup over the status as JSON (the status file): the PF's object or nullptr.
const nlohmann::json* find_pf(const nlohmann::json& status, const std::string& key);

}  // namespace vfready::model
