// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "event_loop.hpp"
#include "vfready/model/config.hpp"
#include "vfready/model/status.hpp"

// The files that carry the status beyond D-Bus and beyond the process: the status file
// (`vfreadyctl status` reads it when vfreadyd is gone), Node Feature Discovery labels and
// node_exporter metrics. Each is rewritten atomically from the loop's thread when the
// status changes, at most every coalesce_after() during a bring-up, and at once on an
// outcome and before vfreadyd exits.
namespace vfready::daemon {

// Now, in ms since the Unix epoch: what the files' dates are made from.
int64_t wall_clock_ms();

// The status of a vfreadyd that cannot start because its configuration (or a
// compatibility table) cannot be read: failed, with `reason`, in the default status file
// (the configuration that could name another is what failed). `vfreadyctl wait`, the
// kubelet drop-in's gate, then answers at once with the reason, and a previous run's
// "ready" is not taken for this one's. Logged when it cannot be written.
void write_start_failure(const std::string& config_file, const std::string& reason);

class StatusFiles {
 public:
  // A write renders every VF (the status file, labels and metrics: some 6,600
  // instructions a VF under callgrind): the time between writes grows with the VFs, so
  // that their share of the loop's work does not; and it is at least kWriteShare times
  // what the last write took, so that on a machine too busy (or too slow) for that, the
  // writes still take no more than a twentieth of the loop's time.
  static constexpr std::chrono::milliseconds kCoalesce{200};
  static constexpr std::chrono::microseconds kCoalescePerVf{250};
  static constexpr int kWriteShare = 20;
  static std::chrono::milliseconds coalesce_after(
      uint32_t vfs, std::chrono::nanoseconds last_write = std::chrono::nanoseconds{0}) {
    using std::chrono::duration_cast;
    using std::chrono::milliseconds;
    return std::max(kCoalesce + duration_cast<milliseconds>(kCoalescePerVf * vfs),
                    duration_cast<milliseconds>(last_write * kWriteShare));
  }

  StatusFiles(EventLoop& loop, const model::DaemonStatus& status, model::PublishConfig files)
      : loop_(loop), status_(status), files_(std::move(files)) {}
  // A reload may name other files: later writes go there.
  void configure(model::PublishConfig files) { files_ = std::move(files); }
  // The status changed: written within coalesce_after(its VFs).
  void changed();
  // Written now.
  void flush();
  // Written now if a change waits for its write (as vfreadyd exits: a status written
  // since it last changed is not rendered again, each VF, to say the same).
  void flush_pending() {
    if (scheduled_) {
      flush();
    }
  }

 private:
  void write(const std::optional<std::string>& path, const std::string& what,
             const std::function<std::string()>& render, bool make_dir);

  EventLoop& loop_;
  const model::DaemonStatus& status_;
  model::PublishConfig files_;
  bool scheduled_ = false;
  std::chrono::nanoseconds last_write_{0};  // what the last flush() took
  std::map<std::string, int> errors_;       // path -> the errno last logged for it
};

}  // namespace vfready::daemon
