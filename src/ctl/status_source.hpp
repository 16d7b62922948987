// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

// Where vfreadyctl takes the status from: vfreadyd over D-Bus, or, when nothing owns
// vfready's bus name (the daemon exited, failed, or is not started yet), the status file
// it wrote last.
namespace vfready::ctl {

struct Fetched {  // NOLINT(bugprone-exception-escape): json moves do not throw
  nlohmann::json status;
  // Set when the status came from the file: "vfreadyd is not running: status from
  // /run/vfready/status.json, written 12 s ago (2026-...)".
  std::optional<std::string> from_file;
};

// The daemon's Describe(), else the file. Throws bus::ClientError (kNotRunning) when
// neither answers, with both reasons.
Fetched fetch_status(const std::string& bus_address, const std::string& status_file);

// The status file alone: nullopt when it is absent or does not parse (`why` says which).
std::optional<Fetched> read_status_file(const std::string& path, std::string* why);

}  // namespace vfready::ctl
