// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "vfready/bus/bus.hpp"

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

// A JSON answer of vfreadyd's, read as the status file is (nesting bounded, nothing after
// the document); throws bus::ClientError (kOther) with the reason when it is not one.
nlohmann::json parse_answer(const std::string& text);

// What vfreadyctl falls back to when vfreadyd is not running (`not_running`): the status
// file, or `not_running` again with the reason there is no file either.
Fetched status_file_instead(const bus::ClientError& not_running, const std::string& path);

}  // namespace vfready::ctl
