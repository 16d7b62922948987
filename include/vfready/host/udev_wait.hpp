// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <string>

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
  bool wait_initialized(int ifindex, std::chrono::steady_clock::time_point deadline) override;

 private:
  std::string run_dir_;
};

}  // namespace vfready::host
