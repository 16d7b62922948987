// SPDX-License-Identifier: Apache-2.0
#include "status_files.hpp"

#include <cerrno>
#include <optional>

#include "log.hpp"
#include "vfready/host/errno_name.hpp"
#include "vfready/host/state_files.hpp"
#include "vfready/model/node_publish.hpp"
#include "vfready/model/status_json.hpp"
#include "vfready/version.hpp"

namespace vfready::daemon {

int64_t wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void write_start_failure(const std::string& config_file, const std::string& reason) {
  model::DaemonStatus status;
  status.version = kVersion;
  status.config_file = config_file;
  status.state = model::DaemonState::kFailed;
  status.text = "failed: the configuration cannot be read";
  status.problems.push_back(model::problem(model::EventKind::kConfigInvalid, reason));
  const auto now = wall_clock_ms();
  status.started_unix_ms = now;
  const auto path = *model::PublishConfig{}.status_file;
  const int err = host::write_file_atomically(
      path, model::status_file_text(model::printable(status), now), 0644, /*make_dir=*/true);
  if (err != 0) {
    log::warn({}, "cannot write the status file " + path + ": " +
                      (err == host::kDirectoryWritableByOthers
                           ? std::string("its directory is writable by others")
                           : host::errno_name(err)));
  }
}

void StatusFiles::changed() {
  if (scheduled_) {
    return;
  }
  scheduled_ = true;
  loop_.add_timer(Clock::now() + coalesce_after(model::vf_count(status_), last_write_), [this] {
    if (scheduled_) {
      flush();
    }
  });
}

void StatusFiles::flush() {
  scheduled_ = false;
  const auto now = wall_clock_ms();
  if (!files_.status_file && !files_.nfd_file && !files_.metrics_file) {
    return;
  }
  const auto started = Clock::now();
  // A copy made printable only when some text is not: it is the whole status, each VF.
  std::optional<model::DaemonStatus> cleaned;
  const auto& status =
      model::is_printable(status_) ? status_ : cleaned.emplace(model::printable(status_));
  write(
      files_.status_file, "status file", [&] { return model::status_file_text(status, now); },
      /*make_dir=*/true);
  write(
      files_.nfd_file, "NFD feature file", [&] { return model::node_feature_labels(status); },
      false);
  write(
      files_.metrics_file, "metrics file", [&] { return model::prometheus_metrics(status, now); },
      false);
  last_write_ = Clock::now() - started;
}

void StatusFiles::write(const std::optional<std::string>& path, const std::string& what,
                        const std::function<std::string()>& render, bool make_dir) {
  if (!path) {
    return;  // not wanted: not even rendered
  }
  const int err = host::write_file_atomically(*path, render(), 0644, make_dir);
  // Without its directory (no NFD, no node_exporter on this node) a file is not wanted.
  const bool unwanted = err == ENOENT && !make_dir;
  auto& last = errors_[*path];
  if (err == host::kDirectoryWritableByOthers && err != last) {
    log::warn({}, "not writing the " + what + " " + *path +
                      ": its directory is writable by others and has no sticky bit, so anyone "
                      "could replace the file there; make the directory 0755 (or set its sticky "
                      "bit)");
  } else if (err != 0 && !unwanted && err != last) {
    log::warn({}, "cannot write the " + what + " " + *path + ": " + host::errno_name(err));
  } else if (err == 0 && last != 0) {
    log::info({}, "the " + what + " " + *path + " is written again");
  }
  last = unwanted ? 0 : err;
}

}  // namespace vfready::daemon
