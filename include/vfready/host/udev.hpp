// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "vfready/host/udev_wait.hpp"

// udev through libudev: whether udev has initialized a netdev, and udev's events about
// netdevs as a monitor receives them (the "udev" source: sent once udevd has processed
// the device, renames included). libudev reads /sys and /run/udev itself; vfready reads
// neither of udev's files.
namespace vfready::host {

// A netdev event from udev.
struct UdevNetdevEvent {
  std::string action;  // "add", "move", "remove", ...
  int ifindex = 0;
  std::string name;
};

// A monitor of udev's netdev events. Not thread-safe.
class UdevMonitor {
 public:
  UdevMonitor();  // throws std::runtime_error when libudev cannot make one
  ~UdevMonitor();
  UdevMonitor(const UdevMonitor&) = delete;
  UdevMonitor& operator=(const UdevMonitor&) = delete;
  // Readable when events wait.
  [[nodiscard]] int fd() const;
  // The events that wait (never blocks); `overflowed` when some were lost.
  std::vector<UdevNetdevEvent> drain(bool* overflowed);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Whether udev has initialized a netdev, looked up by libudev (its database entry).
// Not thread-safe.
class UdevDevices {
 public:
  UdevDevices();  // throws std::runtime_error when libudev cannot make a context
  ~UdevDevices();
  UdevDevices(const UdevDevices&) = delete;
  UdevDevices& operator=(const UdevDevices&) = delete;
  // Whether udevd runs here (its control socket exists). Without it nothing initializes
  // devices, and nothing is to be waited for: as `udevadm settle` decides.
  [[nodiscard]] bool udev_active() const;
  [[nodiscard]] bool initialized(int ifindex) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// UdevWait over one monitor, for all the PF workers of a pass (thread-safe): a netdev
// is initialized when udev's event for it has come, or, for one that was there before
// the pass, when libudev says so. A thread of its own reads the monitor and wakes the
// worker waiting for the netdev an event names (and no other). Make it before the pass
// creates netdevs, so that no event of theirs is missed.
class LibudevWait final : public UdevWait {
 public:
  LibudevWait();  // throws std::runtime_error when libudev cannot make a monitor
  ~LibudevWait() override;
  LibudevWait(const LibudevWait&) = delete;
  LibudevWait& operator=(const LibudevWait&) = delete;
  bool wait_initialized(int ifindex, Netdev netdev,
                        std::chrono::steady_clock::time_point deadline) override;

 private:
  void read_events();

  std::mutex mu_;
  UdevMonitor monitor_;
  UdevDevices devices_;        // with mu_ held
  std::set<int> initialized_;  // by the events received so far
  struct Waiters {
    std::condition_variable cv;
    int count = 0;
  };
  std::map<int, Waiters> waiting_;  // by ifindex: the workers waiting for it
  uint64_t lost_ = 0;               // how often events were lost: waiters then look their netdev up
  bool broken_ = false;             // the reader stopped: waiters look their netdev up
  int stop_fd_ = -1;
  std::thread reader_;
};

}  // namespace vfready::host
