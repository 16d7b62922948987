// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <string>
#include <vector>

// Waiting for udev to finish with a netdev: its database file <run>/data/n<ifindex>
// exists once udevd has processed the device's add event, renames included. Event
// driven (inotify), bounded by a deadline.
namespace vfready::host {

class UdevWait {
 public:
  virtual ~UdevWait() = default;
  // True once the netdev is initialized; false at the deadline.
  virtual bool wait_initialized(int ifindex, std::chrono::steady_clock::time_point deadline) = 0;
};

class RunDirUdevWait final : public UdevWait {
 public:
  // `run_dir` is udev's runtime directory (/run/udev). Without it there is no udevd
  // (a container, an initramfs): nothing to wait for, as `udevadm settle` decides.
  explicit RunDirUdevWait(std::string run_dir) : run_dir_(std::move(run_dir)) {}
  ~RunDirUdevWait() override;
  RunDirUdevWait(const RunDirUdevWait&) = delete;
  RunDirUdevWait& operator=(const RunDirUdevWait&) = delete;
  bool wait_initialized(int ifindex, std::chrono::steady_clock::time_point deadline) override;

 private:
  std::string run_dir_;
  // One inotify instance for every wait: closing one waits for an SRCU grace period
  // (some 20 ms), which per VF added up to most of a PF's udev step.
  int fd_ = -1;
};

// Tells which netdevs udev has just initialized (their db entry appeared): the moment a
// new or re-created netdev can be named. Event driven (inotify on <run>/data).
class UdevNetdevWatch {
 public:
  explicit UdevNetdevWatch(const std::string& run_dir);
  ~UdevNetdevWatch();
  UdevNetdevWatch(const UdevNetdevWatch&) = delete;
  UdevNetdevWatch& operator=(const UdevNetdevWatch&) = delete;
  // -1 when there is no udev run directory to watch.
  [[nodiscard]] int fd() const { return fd_; }
  // The ifindexes whose entry appeared (never blocks); `overflowed` when some were lost.
  std::vector<int> drain(bool* overflowed);

 private:
  int fd_ = -1;
};

}  // namespace vfready::host
