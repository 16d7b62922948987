// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "host_roots.hpp"
#include "pass_hosts.hpp"
#include "vfready/host/device_calls.hpp"
#include "vfready/host/stuck_call.hpp"
#include "vfready/host/udev.hpp"
#include "vfready/host/udev_wait.hpp"
#include "vfready/model/compat_table.hpp"
#include "vfready/model/config.hpp"
#include "vfready/model/plan.hpp"
#include "vfready/model/problem.hpp"
#include "vfready/model/status.hpp"
#include "vfready/pipeline/name_registry.hpp"

// The threads of a pass (its planner, its runner: pass_runner.hpp), which do what can
// block (reading sysfs, netlink) and tell the loop what happened through a channel. A
// thread may outlive the pass that gave up on it (a netlink request the kernel holds):
// what it touches is its own copy or owned by shared_ptr, never by the loop's stack.
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
  // What the pass's planner and runner read and change the host through.
  std::shared_ptr<PassHosts> hosts = system_hosts();
};

// PFs whose pass is still running, across passes. With the step bound, the guard against
// a runner that waits in the kernel outside a helper (a netlink call the driver holds up
// under rtnl_lock, a sysfs read under net/): calls that take a device lock have their
// own deadline in a helper (DeviceCalls), these do not. The loop gives such a step up
// past its bound and calls the PF stuck; the PF stays out of later passes until its pass
// ends, and then is brought up again, as after a helper's call. Runners leave it from
// their threads: its mutex guards nothing else.
class BusyPfs {
 public:
  // A pass starts for `pci`: false when one (given up) is still running.
  bool enter(const std::string& pci);
  // The pass of `pci` ends.
  void leave(const std::string& pci);
  // The loop gives up on the pass of `call.device`, waiting in step `call.call`: false
  // when it has ended already (its outcome is on its way to the loop).
  bool give_up(host::StuckCall call);
  // The step a pass given up on for `pci` is still in, if one is.
  std::optional<host::StuckCall> given_up(const std::string& pci);
  // The passes given up on that have ended since the last collect(), each once.
  std::vector<host::ReturnedCall> collect();

 private:
  std::mutex mu_;
  std::set<std::string> running_;
  std::map<std::string, host::StuckCall> given_up_;
  std::vector<host::ReturnedCall> returned_;
};

// What workers tell the loop.
struct PassMessage {
  // kWaiting: the planner waits for something before it reads the host (`step` says what).
  enum class Kind { kPlanned, kStopped, kStep, kDone, kWaiting } kind = Kind::kStep;
  std::size_t pf = 0;
  std::string step{};
  std::optional<model::PfStatus> done{};
  std::vector<model::PfTarget> targets{};
  std::shared_ptr<const model::HostInfo> host{};
  std::shared_ptr<host::UdevWait> udev{};  // the pass's, for every PF's pass
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
  std::mutex mu_;
  std::deque<PassMessage> queue_;
  int fd_;
};

// Starts listening to udev, reads the host, makes the plan and checks the driver; posts
// kPlanned or kStopped.
void start_planner(std::shared_ptr<PassChannel> channel, BringupInputs in);

}  // namespace vfready::daemon
