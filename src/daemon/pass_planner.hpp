// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "event_loop.hpp"
#include "host_access.hpp"
#include "host_roots.hpp"
#include "vfready/host/device_calls.hpp"
#include "vfready/host/udev.hpp"
#include "vfready/host/udev_wait.hpp"
#include "vfready/host/worker_process.hpp"
#include "vfready/model/compat_table.hpp"
#include "vfready/model/config.hpp"
#include "vfready/model/plan.hpp"
#include "vfready/model/problem.hpp"
#include "vfready/model/status.hpp"
#include "vfready/pipeline/name_registry.hpp"

// The planner of a pass: a worker process (vfready-read, host::fork_worker) waits for
// the required modules and reads the host (sysfs; what takes a device lock, in its own
// helpers, whose calls left behind it hands to the daemon's DeviceCalls), and tells the
// loop what it read; the loop makes the plan from it. No thread of the daemon's reads
// the host, and none waits for the worker: it may outlive the pass (a reload or a stop
// does not wait for it), and exits when it next tells a daemon that no longer listens
// (its calls left behind then go on alone, unknown to the daemon).
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
  std::shared_ptr<HostAccess> host_access = system_host_access();
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

class PassPlanner {
 public:
  // Starts the worker, which reads the host as `in` says (`in` outlives this object).
  explicit PassPlanner(const BringupInputs& in);
  // A planner that tells kStopped with `problem` at once (its worker could not start).
  PassPlanner(const BringupInputs& in, model::Problem problem);
  ~PassPlanner();
  PassPlanner(const PassPlanner&) = delete;
  PassPlanner& operator=(const PassPlanner&) = delete;
  // Readable while take() has something to tell, until it has told its end.
  [[nodiscard]] int fd() const { return fd_; }
  // What has come, in order: kWaiting, then one kPlanned or kStopped (the end). Never
  // waits.
  std::vector<PassMessage> take();
  // The end is told: fd() need not be watched (it may stay readable).
  [[nodiscard]] bool ended() const { return ended_; }
  // When take() tells the end should nothing more come: the worker read nothing more for
  // host_read_quiet_bound() (past its wait for the modules); nullopt once it has ended.
  [[nodiscard]] std::optional<Clock::time_point> until() const {
    return ended_ ? std::nullopt : std::optional(until_);
  }
  // take() told the end at the bound and the worker has not ended: it may still hand
  // over calls it left behind (drain()).
  [[nodiscard]] bool given_up() const { return given_up_ && !records_.ended(); }
  // The inputs may go (the bring-up that made it ends): only drain(), fd(),
  // lost_a_call() and the destructor may be called after.
  void outlive_inputs() { in_ = nullptr; }
  // For a planner given up on: takes what its worker tells now, adopting each call it
  // left behind and dropping the rest. Never waits. True once the worker has ended.
  // Uses only the DeviceCalls, which it shares.
  bool drain();
  // A call the worker left behind came without its helper's socket (ours at their
  // limit): its device is stuck in the kernel unknown to the daemon.
  [[nodiscard]] bool lost_a_call() const { return records_.lost_a_descriptor(); }

 private:
  // No worker: take() tells kStopped with `problem`.
  void fail(model::Problem problem);
  // What record `r` tells, if anything: a call left behind is adopted (its socket taken).
  std::optional<PassMessage> told(host::Record& r);
  // The end: kStopped with one problem of kind `kind`.
  static PassMessage stopped(model::EventKind kind, std::string text);
  // A call left behind ('s'), into the daemon's DeviceCalls with its helper's socket.
  void adopt(host::Record& r);
  const BringupInputs* in_;                   // null once outlive_inputs()
  std::shared_ptr<host::DeviceCalls> calls_;  // in_'s, kept for drain()
  int fd_ = -1;
  host::RecordReader records_;
  std::optional<PassMessage> failed_;  // told at the first take(): no worker
  bool ended_ = false;
  Clock::time_point until_;  // see until()
  bool given_up_ = false;
};

// How long the host's reader may read nothing more (no function read, nothing told)
// before its pass stops: it reads functions side by side, each with plain reads of sysfs
// and at most a device call or two, each of those left behind at timeouts.device_call_ms;
// three of those, and never under 5 s (a loaded machine).
std::chrono::milliseconds host_read_quiet_bound(const model::Config& config);

// The plan of a pass on `host` as read, or why there is none: what the planner tells.
PassMessage plan_pass(const BringupInputs& in, std::shared_ptr<const model::HostInfo> host);

}  // namespace vfready::daemon
