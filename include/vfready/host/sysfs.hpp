// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vfready/host/device_calls.hpp"
#include "vfready/host/device_op.hpp"
#include "vfready/host/stuck_call.hpp"
#include "vfready/model/result.hpp"

// sysfs, rooted at a configurable directory (/sys, or a fake host's). Paths are
// relative to the root. Writes return the errno the kernel gave, so callers can tell
// EBUSY from ERANGE. Calls that wait on a device lock or a driver's firmware go through
// on_device() (or start_on_device(), for a caller that awaits the answer); the loop
// reads only attributes the kernel serves without a driver (docs/development.md).
// Calls may come from several threads at once (read_host does).
namespace vfready::host {

using DeviceCallStart = DeviceCalls::Started;

class Sysfs {
 public:
  virtual ~Sysfs() = default;
  // The attribute's value without its trailing newline.
  virtual Result<std::string> read(const std::string& rel) = 0;
  // 0, or the errno of the write.
  virtual int write(const std::string& rel, std::string_view value) = 0;
  // Calls that wait on the device lock of `device` (a PF's address; calls on its VFs
  // count as its own), paths relative to the root, made as DeviceCalls::run() makes them.
  // A deadline of zero means the sysfs's own bound for reads.
  virtual std::vector<DeviceOpResult> on_device(const std::string& device,
                                                std::vector<DeviceOp> ops,
                                                std::chrono::milliseconds deadline) = 0;
  // on_device() without waiting: a call under way (watch its fd), or, where the calls
  // are made in the calling thread or none was made (stuck), the answer. The Started's
  // kernel call counts are taken at once.
  virtual DeviceCallStart start_on_device(const std::string& device, std::vector<DeviceOp> ops,
                                          std::chrono::milliseconds deadline) = 0;
  // start_on_device() with each op's path under the directory `under` (relative to the
  // root, as "bus/pci"): many ops' short paths, their directory written once a call.
  virtual DeviceCallStart start_on_device_under(const std::string& device, std::string_view under,
                                                std::vector<DeviceOp> ops,
                                                std::chrono::milliseconds deadline) = 0;
  // A started call's answer, once its fd is readable or at its until() (DeviceCalls::finish).
  virtual std::vector<DeviceOpResult> finish_on_device(DeviceCalls::Pending call) = 0;
  // What keeps `device` stuck, if anything does.
  virtual std::optional<StuckCall> stuck(const std::string& device) = 0;
  virtual bool exists(const std::string& rel) = 0;
  // Entries of a directory, sorted; empty when absent.
  virtual std::vector<std::string> list(const std::string& rel) = 0;
  // The last component of a symlink's target ("mlx5_core" for driver ->), if a link.
  virtual std::optional<std::string> link_target_name(const std::string& rel) = 0;
};

class RootedSysfs final : public Sysfs {
 public:
  // Without `calls`, device calls are made in the calling thread (tools and tests that
  // can afford to wait); `read_deadline` bounds device reads made with a zero deadline.
  explicit RootedSysfs(std::string root, std::shared_ptr<DeviceCalls> calls = nullptr,
                       std::chrono::milliseconds read_deadline = std::chrono::seconds(10))
      : root_(std::move(root)), calls_(std::move(calls)), read_deadline_(read_deadline) {}
  Result<std::string> read(const std::string& rel) override;
  int write(const std::string& rel, std::string_view value) override;
  std::vector<DeviceOpResult> on_device(const std::string& device, std::vector<DeviceOp> ops,
                                        std::chrono::milliseconds deadline) override;
  DeviceCallStart start_on_device(const std::string& device, std::vector<DeviceOp> ops,
                                  std::chrono::milliseconds deadline) override;
  DeviceCallStart start_on_device_under(const std::string& device, std::string_view under,
                                        std::vector<DeviceOp> ops,
                                        std::chrono::milliseconds deadline) override;
  std::vector<DeviceOpResult> finish_on_device(DeviceCalls::Pending call) override;
  std::optional<StuckCall> stuck(const std::string& device) override;
  bool exists(const std::string& rel) override;
  std::vector<std::string> list(const std::string& rel) override;
  std::optional<std::string> link_target_name(const std::string& rel) override;
  [[nodiscard]] const std::string& root() const { return root_; }

 private:
  [[nodiscard]] std::string path(const std::string& rel) const {
    std::string out;
    out.reserve(root_.size() + 1 + rel.size());
    return out.append(root_).append(1, '/').append(rel);
  }
  std::string root_;
  std::shared_ptr<DeviceCalls> calls_;
  std::chrono::milliseconds read_deadline_;
};

}  // namespace vfready::host
