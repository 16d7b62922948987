// SPDX-License-Identifier: Apache-2.0
#include "status_source.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <ctime>
#include <fstream>
#include <sstream>
#include <system_error>

#include "vfready/model/json_document.hpp"

namespace vfready::ctl {

namespace {

// The file is the daemon's, and small; a bound keeps a wrong path (a device) harmless.
constexpr std::size_t kMaxBytes = 64U << 20U;

std::string age_of(const struct stat& st) {
  const auto seconds = static_cast<long long>(std::time(nullptr) - st.st_mtime);
  if (seconds < 120) {
    return std::to_string(std::max(seconds, 0LL)) + " s ago";
  }
  if (seconds < 7200) {
    return std::to_string(seconds / 60) + " min ago";
  }
  return std::to_string(seconds / 3600) + " h ago";
}

// The status file alone: nullopt when it is absent or does not parse (`why` says which).
std::optional<Fetched> read_status_file(const std::string& path, std::string* why) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    *why = path + ": " + std::generic_category().message(errno);
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode) || static_cast<std::size_t>(st.st_size) > kMaxBytes) {
    *why = path + ": not a status file (a regular file of at most 64 MiB)";
    return std::nullopt;
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  // As vfreadyd's answer is read: nesting bounded, nothing after the document.
  auto status = model::parse_json_document(path, text.str());
  if (!status) {
    *why = status.error().message + " (not a status file)";
    return std::nullopt;
  }
  if (!status.value().is_object()) {
    *why = path + ": not a status file (no JSON object in it)";
    return std::nullopt;
  }
  Fetched f;
  f.status = std::move(status).value();
  const auto at = f.status.find("generated_at");
  f.from_file = "vfreadyd is not running: status from " + path + ", written " + age_of(st) +
                (at != f.status.end() && at->is_string() ? " (" + at->get<std::string>() + ")"
                                                         : std::string());
  return f;
}

}  // namespace

nlohmann::json parse_answer(const std::string& text) {
  auto parsed = model::parse_json_document("vfreadyd's answer", text);
  if (!parsed) {
    throw bus::ClientError(bus::ClientError::Kind::kOther, parsed.error().message);
  }
  return std::move(parsed).value();
}

Fetched status_file_instead(const bus::ClientError& not_running, const std::string& path) {
  std::string why;
  if (auto f = read_status_file(path, &why)) {
    return *f;
  }
  throw bus::ClientError(bus::ClientError::Kind::kNotRunning,
                         std::string(not_running.what()) + "; and no status file: " + why);
}

Fetched fetch_status(const std::string& bus_address, const std::string& status_file) {
  try {
    auto client = bus::Client::connect(bus_address);
    return Fetched{parse_answer(client->describe()), std::nullopt};
  } catch (const bus::ClientError& e) {
    if (e.kind() != bus::ClientError::Kind::kNotRunning) {
      throw;
    }
    return status_file_instead(e, status_file);
  }
}

}  // namespace vfready::ctl
