// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <sys/epoll.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "event_loop.hpp"
#include "pass_planner.hpp"
#include "vfready/pipeline/autoprobe_guard.hpp"

// The PFs' passes of one bring-up, each a task (pipeline::pf_pass), driven by the loop:
// what any of them waits on (a helper's socket, a udev wait's fd, the naming turn) is
// in one epoll set, which the loop watches as one fd, and the earliest of their bounds
// is the loop's deadline for it. A turn resumes the passes whose wait has come. No
// thread of its own: what a pass does between two waits (sysfs reads the kernel serves
// without a driver's lock, udev's database) is done on the loop.
namespace vfready::daemon {

// A PF of the plan to bring up: its place in the plan and its target (the bring-up's,
// which outlives its passes: not copied, as it holds every VF's target).
struct PassPf {
  std::size_t index = 0;
  const model::PfTarget* target = nullptr;
};

class PfPasses {
 public:
  struct Hooks {
    std::function<void(std::size_t pf, const char* step)> step;        // a PF's step starts
    std::function<void(std::size_t pf, model::PfStatus status)> done;  // a PF's pass ended
  };
  // `planner_fd`: one more fd to watch in the set (the planner's channel); turn() says when
  // it is readable. Throws std::system_error when no epoll set can be made.
  PfPasses(Hooks hooks, int planner_fd);
  ~PfPasses();
  PfPasses(const PfPasses&) = delete;
  PfPasses& operator=(const PfPasses&) = delete;

  // The epoll set, readable when some pass's wait (or `planner_fd`) is: the same for life.
  [[nodiscard]] int fd() const { return epoll_; }
  // The earliest bound of a pass's wait; none while no pass runs.
  [[nodiscard]] std::optional<Clock::time_point> until() const { return until_; }

  // Starts each PF's pass; each goes as far as it can at once.
  void start(std::vector<PassPf> pfs, const BringupInputs& in,
             std::shared_ptr<const model::HostInfo> host, std::shared_ptr<host::UdevWait> udev,
             std::shared_ptr<pipeline::NameRegistry> names);
  // Resumes each pass whose wait has come; true when `planner_fd` is readable.
  bool turn();
  // The planner has told its end: `planner_fd` is no longer watched.
  void forget_planner();
  // The daemon's end, which unwinds no pass: each PF whose autoprobe a pass under way has
  // off is turned on again.
  void let_autoprobe_go() { autoprobe_guards_.let_go(); }

 private:
  struct RunningPf;
  void start_one(PassPf pf);
  void resume(RunningPf& d);
  void end_if_done(RunningPf& d);
  void end(RunningPf& d, model::PfStatus status);
  // Once every pass has ended: what they shared (the udev wait, the host) let go.
  void let_go_if_ended();
  // The set made to follow the waits of the passes in `resumed` (the others' are as
  // they were: a pass that waits keeps the fds it waits on open). Ended passes wait on
  // nothing.
  void follow(const std::vector<RunningPf*>& resumed);
  // The fds `d` waited on, out of its hands; those no pass waits on now into left_.
  void unwatch(RunningPf& d);
  // The fds of `d`'s wait, into the set and by_fd_. Throws when epoll_ctl fails.
  void watch_wait(RunningPf& d);
  void fail_all(const std::exception& e);
  void recompute_until();  // until_, from the passes' waits

  Hooks hooks_;
  int epoll_ = -1;
  int planner_fd_ = -1;
  BringupInputs in_;
  std::shared_ptr<const model::HostInfo> host_;
  std::shared_ptr<host::UdevWait> udev_;
  std::shared_ptr<pipeline::NameRegistry> names_;
  pipeline::AutoprobeGuards autoprobe_guards_;  // before pfs_: outlives their guards
  std::vector<std::unique_ptr<RunningPf>> pfs_;
  // fd -> the passes that wait on it (none: not in the set). Changed for the passes that
  // went on only: a turn costs what they wait on, not what every pass does.
  std::vector<std::vector<RunningPf*>> by_fd_;
  std::vector<epoll_event> events_;  // epoll_wait's, kept between turns
  // A turn's lists, kept between turns (their room is taken once): the passes whose fds
  // are readable, those resumed, the fds no pass waits on any more (follow()).
  std::vector<RunningPf*> ready_;
  std::vector<RunningPf*> resumed_;
  std::vector<int> left_;
  std::optional<Clock::time_point> until_;
};

}  // namespace vfready::daemon
