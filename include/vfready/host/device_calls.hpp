// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

// Calls into a driver that wait on a device lock (sriov_numvfs reads and writes,
// drivers_probe, unbind, autoprobe, OFED's GUID files) made by helper processes under a
// deadline. A driver can hold its lock forever, and a task waiting on it cannot be
// killed: only a helper takes that risk. When a call outlives its deadline, its helper
// is left behind and its device is stuck: every later call for the device answers kStuck
// at once, until the helper's call returns (collect() tells). No thread of the caller
// ever waits in the kernel on the device.
namespace vfready::host {

// A call's answer when its device is stuck (this call or an earlier one has not
// returned). Not an errno: those are positive.
inline constexpr int kStuck = -1;

struct DeviceOp {
  enum class Kind : uint8_t { kRead, kWrite };
  Kind kind = Kind::kRead;
  std::string path;   // absolute
  std::string value;  // what a write writes
  // A file written again and again (drivers_probe): the helper keeps it open for the
  // next write (pwrite at 0), which saves an open and a close a call.
  bool keep_open = false;
};

struct DeviceOpResult {
  int err = 0;       // 0, the errno of the call, or kStuck
  std::string text;  // what a read gave, without its trailing newline
};

// A call whose helper was left behind.
struct StuckCall {
  std::string device;  // the key callers gave (a PF's PCI address)
  std::string call;    // "write 8 to /sys/bus/pci/devices/.../sriov_numvfs"
  std::chrono::milliseconds deadline{0};
  std::chrono::steady_clock::time_point since;
};

// A call left behind that has since returned.
struct ReturnedCall {
  StuckCall stuck;
  int err = 0;  // its errno (0: it succeeded after all)
};

class DeviceCalls {
 public:
  DeviceCalls() = default;
  ~DeviceCalls();  // idle helpers exit; helpers left behind exit when their call returns
  DeviceCalls(const DeviceCalls&) = delete;
  DeviceCalls& operator=(const DeviceCalls&) = delete;

  // Runs `ops` in order in one helper, stopping after the first write that fails;
  // answers one result per op run. When the device is stuck, or becomes stuck because
  // the calls outlive `deadline`, the last result is kStuck. Safe from any thread.
  std::vector<DeviceOpResult> run(const std::string& device, std::span<const DeviceOp> ops,
                                  std::chrono::milliseconds deadline);
  // Ends the idle helpers (they exit); the next calls spawn new ones. A helper is a fork
  // of the daemon and keeps the pages the daemon has written since as its own copies:
  // the daemon ends them when a pass is over, rather than keep a pool of old images.
  void close_idle();
  // The call that keeps `device` stuck, if one does.
  std::optional<StuckCall> stuck(const std::string& device);
  // Every call left behind that has not returned.
  std::vector<StuckCall> stuck_calls();
  // The calls left behind that have returned since the last collect(): their devices
  // are no longer stuck.
  std::vector<ReturnedCall> collect();

 private:
  struct Helper {
    int fd = -1;  // our end of its socket
  };
  struct LeftBehind {
    Helper helper;
    StuckCall call;
  };
  Helper acquire(int* err);
  void release(Helper helper);
  void reap_locked();

  std::mutex mu_;
  std::vector<Helper> idle_;
  std::vector<LeftBehind> left_behind_;
  std::vector<ReturnedCall> returned_;
};

}  // namespace vfready::host
