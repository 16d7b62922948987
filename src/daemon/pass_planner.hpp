// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "host_roots.hpp"
#include "pass_hosts.hpp"
#include "vfready/host/device_calls.hpp"
#include "vfready/host/udev.hpp"
#include "vfready/host/udev_wait.hpp"
#include "vfready/model/compat_table.hpp"
#include "vfready/model/config.hpp"
#include "vfready/model/plan.hpp"
#include "vfready/model/problem.hpp"
#include "vfready/model/status.hpp"
#include "vfready/pipeline/name_registry.hpp"

// The planner of a pass: the thread that waits for the required modules, reads the
// host (sysfs; what takes a device lock, in helpers) and makes the plan, and
// tells the loop through a channel. It may outlive the pass (a reload or a stop does not
// wait for it): what it touches is its own copy or owned by shared_ptr.
namespace vfready::daemon {

struct BringupInputs {
  model::Config config;
  model::CompatTable table;
  HostRoots roots;
  // The daemon's helpers for calls that take a device lock: one pool for its life, so
  // that a PF stuck in one pass is known stuck in the next.
  std::shared_ptr<host::DeviceCalls> calls = std::make_shared<host::DeviceCalls>();
  // The daemon's one reader of udev's events, made before anything is read; null when
  // libudev could not make a monitor (a pass then stops at once, saying so).
  std::shared_ptr<host::UdevEventReader> udev{};
  // What the pass's planner and its PFs' passes read and change the host through.
  std::shared_ptr<PassHosts> hosts = system_hosts();
};

// What the planner tells the loop.
struct PassMessage {
  // kWaiting: the planner waits for something before it reads the host (`step` says what).
  enum class Kind { kPlanned, kStopped, kWaiting } kind = Kind::kPlanned;
  std::string step{};
  std::vector<model::PfTarget> targets{};
  std::shared_ptr<const model::HostInfo> host{};
  std::vector<model::Problem> problems{};
  std::vector<model::Problem> warnings{};
};

// Messages in order, and an eventfd that is readable while some wait.
class PassChannel {
 public:
  PassChannel();
  ~PassChannel();
  PassChannel(const PassChannel&) = delete;
  PassChannel& operator=(const PassChannel&) = delete;
  [[nodiscard]] int fd() const { return fd_; }
  void post(PassMessage m);
  // Every message waiting (never blocks).
  std::deque<PassMessage> take();

 private:
  std::mutex mu_;  // the planner's thread posts, the loop takes
  std::deque<PassMessage> queue_;
  int fd_;
};

// Reads the host, makes the plan and checks the driver; posts kPlanned or kStopped.
void start_planner(std::shared_ptr<PassChannel> channel, BringupInputs in);

}  // namespace vfready::daemon
