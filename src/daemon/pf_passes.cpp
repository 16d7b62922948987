// SPDX-License-Identifier: Apache-2.0
#include "pf_passes.hpp"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "vfready/pipeline/pf_bringup.hpp"

namespace vfready::daemon {

// One PF's task and what it is made of; never moved once its task exists (the task
// holds references to its target and host).
struct PfPasses::RunningPf {
  std::size_t index = 0;
  const model::PfTarget* target = nullptr;  // PassPf's
  std::unique_ptr<OwnedPfHost> host_parts;
  pipeline::ProgressFn progress;
  pipeline::TaskSlot slot;
  std::optional<pipeline::Task<model::PfStatus>> task;
  bool ended = false;
  std::vector<int> watching;  // the fds entered in the set for it (its wait's, last turn)
};

namespace {

model::PfStatus internal_error(const model::PfTarget& target, const std::string& what) {
  model::PfStatus status;
  status.pci = target.pci;
  status.state = model::PfState::kFailed;
  status.problems.push_back(
      model::problem(model::EventKind::kInternalError, what, target.pci.str()));
  return status;
}

void watch(int epoll, int fd) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  // MOD first: the fd may be in the set already. ENOENT: it is not (or it was closed,
  // which took it out, and its number is another file's now).
  if (::epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &ev) == 0) {
    return;
  }
  if (errno != ENOENT || ::epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &ev) != 0) {
    throw std::system_error(errno, std::generic_category(),
                            "epoll_ctl of fd " + std::to_string(fd));
  }
}

}  // namespace

PfPasses::PfPasses(Hooks hooks, int planner_fd)
    : hooks_(std::move(hooks)), epoll_(::epoll_create1(EPOLL_CLOEXEC)), planner_fd_(planner_fd) {
  if (epoll_ < 0) {
    throw std::system_error(errno, std::generic_category(), "epoll_create1");
  }
  try {
    watch(epoll_, planner_fd_);
  } catch (...) {
    ::close(epoll_);
    throw;
  }
}

PfPasses::~PfPasses() {
  // The tasks first: they hold the fds the set watches.
  pfs_.clear();
  ::close(epoll_);
}

void PfPasses::recompute_until() {
  // A pass's wait changes only as it goes on (start(), turn()) or ends: the loop asks
  // before each of its waits, far more often.
  std::optional<Clock::time_point> until;
  for (const auto& d : pfs_) {
    if (!d->ended && d->slot.wait.until != Clock::time_point::max()) {
      until = until ? std::min(*until, d->slot.wait.until) : d->slot.wait.until;
    }
  }
  until_ = until;
}

void PfPasses::start(std::vector<PassPf> pfs, const BringupInputs& in,
                     std::shared_ptr<const model::HostInfo> host,
                     std::shared_ptr<host::UdevWait> udev,
                     std::shared_ptr<pipeline::NameRegistry> names) {
  in_ = in;
  host_ = std::move(host);
  udev_ = std::move(udev);
  names_ = std::move(names);
  std::vector<RunningPf*> started;
  for (auto& pf : pfs) {
    start_one(pf);
    started.push_back(pfs_.back().get());
  }
  follow(started);
  let_go_if_ended();
  recompute_until();
}

void PfPasses::start_one(PassPf pf) {
  auto& d = *pfs_.emplace_back(std::make_unique<RunningPf>());
  d.index = pf.index;
  d.target = pf.target;
  d.progress = [this, index = d.index](const char* step) { hooks_.step(index, step); };
  try {
    d.host_parts = in_.host_access->pf_host(in_, *udev_);
    d.host_parts->host().autoprobe_guards = &autoprobe_guards_;
    d.task.emplace(pipeline::pf_pass(*d.target, in_.config, in_.table, *host_, d.host_parts->host(),
                                     *names_, d.progress));
    d.task->start(d.slot);
  } catch (const std::exception& e) {
    end(d, internal_error(*d.target, e.what()));
    return;
  }
  end_if_done(d);
}

bool PfPasses::turn() {
  events_.resize(by_fd_.size() + 1);
  const int n = ::epoll_wait(epoll_, events_.data(), static_cast<int>(events_.size()), 0);
  if (n < 0 && errno != EINTR) {
    fail_all(std::system_error(errno, std::generic_category(), "epoll_wait"));
    return false;
  }
  bool planner_told = false;
  auto& ready = ready_;
  ready.clear();
  for (int i = 0; i < n; ++i) {
    const int fd = events_[static_cast<std::size_t>(i)].data.fd;
    planner_told = planner_told || fd == planner_fd_;
    if (fd >= 0 && static_cast<std::size_t>(fd) < by_fd_.size()) {
      const auto& owners = by_fd_[static_cast<std::size_t>(fd)];
      ready.insert(ready.end(), owners.begin(), owners.end());
    }
  }
  const auto now = Clock::now();
  auto& resumed = resumed_;
  resumed.clear();
  try {
    for (auto& d : pfs_) {
      if (!d->ended && (d->slot.wait.until <= now ||
                        std::find(ready.begin(), ready.end(), d.get()) != ready.end())) {
        resumed.push_back(d.get());
        resume(*d);
      }
    }
  } catch (...) {
    // A hook threw (the bring-up's, as a pass ended): the passes that went on still
    // wait on what they wait on now, or nothing would resume them.
    follow(resumed);
    recompute_until();
    throw;
  }
  if (!resumed.empty()) {
    follow(resumed);
    recompute_until();
  }
  let_go_if_ended();
  return planner_told;
}

void PfPasses::resume(RunningPf& d) {
  try {
    std::exchange(d.slot.resume, {}).resume();
  } catch (const std::exception& e) {
    end(d, internal_error(*d.target, e.what()));
    return;
  }
  end_if_done(d);
}

void PfPasses::end_if_done(RunningPf& d) {
  if (d.ended) {
    return;
  }
  if (!d.task->done()) {
    if (d.slot.wait.fds.empty() && d.slot.wait.until == Clock::time_point::max()) {
      // A bug: nothing would ever resume it.
      end(d, internal_error(*d.target, "its pass waits on nothing, forever"));
    }
    return;
  }
  model::PfStatus status;
  try {
    status = d.task->take();
  } catch (const std::exception& e) {
    status = internal_error(*d.target, e.what());
  }
  end(d, std::move(status));
}

void PfPasses::end(RunningPf& d, model::PfStatus status) {
  d.ended = true;
  d.task.reset();
  d.host_parts.reset();
  hooks_.done(d.index, std::move(status));
}

void PfPasses::let_go_if_ended() {
  if (std::all_of(pfs_.begin(), pfs_.end(), [](const auto& p) { return p->ended; })) {
    // The pass's udev wait stops listening (the reader tells it every event while it
    // lives), and the host as read is the bring-up's to keep.
    udev_.reset();
    host_.reset();
  }
}

void PfPasses::follow(const std::vector<RunningPf*>& resumed) {
  // Only the passes that went on can wait on other fds than they did: theirs are taken
  // out of the set and entered again (one may be a file it opened since, under the
  // number of one it closed); the others' are as they were.
  auto& left = left_;  // fds a pass no longer waits on
  left.clear();
  RunningPf* entering = nullptr;  // the pass whose fds are being entered
  try {
    for (RunningPf* d : resumed) {
      entering = d;
      unwatch(*d);
      if (!d->ended) {
        watch_wait(*d);
      }
    }
  } catch (const std::exception& e) {
    // epoll_ctl failed (ENOMEM, ENOSPC) or by_fd_ could not grow: every pass ends, and
    // what has no owner in by_fd_ (taken out above, or entered before by_fd_ knew of
    // it) leaves the set here; fail_all() takes out the rest.
    for (const int fd : left) {
      static_cast<void>(::epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr));
    }
    if (entering != nullptr) {
      for (const int fd : entering->slot.wait.fds) {
        static_cast<void>(::epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr));
      }
    }
    fail_all(e);
    return;
  }
  for (const int fd : left) {
    if (by_fd_[static_cast<std::size_t>(fd)].empty()) {
      // Closed already (EBADF, or ENOENT: closing it took it out) is as good.
      static_cast<void>(::epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr));
    }
  }
}

void PfPasses::forget_planner() {
  if (planner_fd_ >= 0) {
    static_cast<void>(::epoll_ctl(epoll_, EPOLL_CTL_DEL, planner_fd_, nullptr));
    planner_fd_ = -1;
  }
}

void PfPasses::unwatch(RunningPf& d) {
  for (const int fd : d.watching) {
    auto& owners = by_fd_[static_cast<std::size_t>(fd)];
    std::erase(owners, &d);
    if (owners.empty()) {
      left_.push_back(fd);
    }
  }
  d.watching.clear();
}

void PfPasses::watch_wait(RunningPf& d) {
  for (const int fd : d.slot.wait.fds) {
    watch(epoll_, fd);  // first: it throws for an fd that is none (below 0)
    const auto at = static_cast<std::size_t>(fd);
    if (at >= by_fd_.size()) {
      by_fd_.resize(at + 1);
    }
    auto& owners = by_fd_[at];
    if (std::find(owners.begin(), owners.end(), &d) == owners.end()) {
      owners.push_back(&d);
      d.watching.push_back(fd);
    }
  }
}

void PfPasses::fail_all(const std::exception& e) {
  // The set cannot be waited on: no pass would go on. Those not ended end here.
  for (auto& d : pfs_) {
    if (!d->ended) {
      end(*d, internal_error(*d->target, e.what()));
    }
  }
  for (std::size_t fd = 0; fd < by_fd_.size(); ++fd) {
    if (!by_fd_[fd].empty()) {
      static_cast<void>(::epoll_ctl(epoll_, EPOLL_CTL_DEL, static_cast<int>(fd), nullptr));
    }
  }
  by_fd_.clear();
  for (auto& d : pfs_) {
    d->watching.clear();
  }
  until_.reset();  // every pass has ended
}

}  // namespace vfready::daemon
