// SPDX-License-Identifier: Apache-2.0
#include "pass_runner.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>

#include "vfready/pipeline/pf_bringup.hpp"

namespace vfready::daemon {

namespace {

using Clock = std::chrono::steady_clock;

// One PF's task and what it is made of; never moved once its task exists (the task
// holds references to its target, host and progress).
struct Driven {
  std::size_t index = 0;
  model::PfTarget target;
  std::unique_ptr<PfOs> os;
  pipeline::ProgressFn progress;
  pipeline::TaskSlot slot;
  std::optional<pipeline::Task<model::PfStatus>> task;
  bool ended = false;
};

class Runner {
 public:
  Runner(std::shared_ptr<PassChannel> channel, std::shared_ptr<BusyPfs> busy,
         std::shared_ptr<pipeline::NameRegistry> names, BringupInputs in,
         std::shared_ptr<const model::HostInfo> host, std::shared_ptr<host::UdevWait> udev,
         std::shared_ptr<RunnerProgress> progress)
      : channel_(std::move(channel)),
        busy_(std::move(busy)),
        names_(std::move(names)),
        in_(std::move(in)),
        host_(std::move(host)),
        udev_(std::move(udev)),
        progress_(std::move(progress)) {}

  void run(std::vector<RunnerPf> pfs) {
    for (auto& pf : pfs) {
      start(std::move(pf));
    }
    try {
      while (std::any_of(pfs_.begin(), pfs_.end(), [](const auto& d) { return !d->ended; })) {
        wait_and_resume();
      }
    } catch (const std::exception& e) {
      // poll() failed, or memory ran out: nothing can be waited for. The PFs not ended
      // end here.
      for (auto& d : pfs_) {
        if (!d->ended) {
          end(*d, internal_error(*d, e));
        }
      }
    }
  }

 private:
  void stamp() {
    progress_->store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed);
  }

  void start(RunnerPf pf) {
    stamp();
    auto& d = *pfs_.emplace_back(std::make_unique<Driven>());
    d.index = pf.index;
    d.target = std::move(pf.target);
    d.progress = [channel = channel_, index = d.index](const char* step) {
      channel->post({.kind = PassMessage::Kind::kStep, .pf = index, .step = step});
    };
    try {
      d.os = in_.hosts->pf_os(in_, *udev_);
      d.task.emplace(pipeline::pf_pass(d.target, in_.config, in_.table, *host_, d.os->host(),
                                       *names_, d.progress));
      d.task->start(d.slot);
    } catch (const std::exception& e) {
      end(d, internal_error(d, e));
      return;
    }
    end_if_done(d);
  }

  // One poll over what every PF waits on; then each PF whose wait has come, resumed.
  void wait_and_resume() {
    std::vector<pollfd> fds;
    std::vector<Driven*> owner;
    auto until = Clock::time_point::max();
    for (auto& d : pfs_) {
      if (d->ended) {
        continue;
      }
      until = std::min(until, d->slot.wait.until);
      for (const int fd : d->slot.wait.fds) {
        fds.push_back({fd, POLLIN, 0});
        owner.push_back(d.get());
      }
    }
    if (fds.empty() && until == Clock::time_point::max()) {
      throw std::logic_error("the PFs of a pass wait on nothing, forever");
    }
    if (::poll(fds.data(), fds.size(), pipeline::poll_timeout(until)) < 0 && errno != EINTR) {
      throw std::system_error(errno, std::generic_category(), "poll");
    }
    std::vector<Driven*> ready;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents != 0) {
        ready.push_back(owner[i]);
      }
    }
    const auto now = Clock::now();
    for (auto& d : pfs_) {
      if (!d->ended && (d->slot.wait.until <= now ||
                        std::find(ready.begin(), ready.end(), d.get()) != ready.end())) {
        resume(*d);
      }
    }
  }

  void resume(Driven& d) {
    stamp();
    try {
      std::exchange(d.slot.resume, {}).resume();
    } catch (const std::exception& e) {
      end(d, internal_error(d, e));
      return;
    }
    end_if_done(d);
  }

  void end_if_done(Driven& d) {
    if (!d.task->done()) {
      return;
    }
    model::PfStatus status;
    try {
      status = d.task->take();
    } catch (const std::exception& e) {
      status = internal_error(d, e);
    }
    end(d, std::move(status));
  }

  static model::PfStatus internal_error(const Driven& d, const std::exception& e) {
    model::PfStatus status;
    status.pci = d.target.pci;
    status.state = model::PfState::kFailed;
    status.problems.push_back(
        model::problem(model::EventKind::kInternalError, e.what(), d.target.pci.str()));
    return status;
  }

  void end(Driven& d, model::PfStatus status) {
    d.ended = true;
    d.task.reset();
    d.os.reset();
    busy_->leave(d.target.pci.str());
    channel_->post({.kind = PassMessage::Kind::kDone, .pf = d.index, .done = std::move(status)});
  }

  std::shared_ptr<PassChannel> channel_;
  std::shared_ptr<BusyPfs> busy_;
  std::shared_ptr<pipeline::NameRegistry> names_;
  BringupInputs in_;
  std::shared_ptr<const model::HostInfo> host_;
  std::shared_ptr<host::UdevWait> udev_;
  std::shared_ptr<RunnerProgress> progress_;
  std::vector<std::unique_ptr<Driven>> pfs_;
};

}  // namespace

void start_pf_runner(std::shared_ptr<PassChannel> channel, std::shared_ptr<BusyPfs> busy,
                     std::shared_ptr<pipeline::NameRegistry> names, std::vector<RunnerPf> pfs,
                     BringupInputs in, std::shared_ptr<const model::HostInfo> host,
                     std::shared_ptr<host::UdevWait> udev,
                     std::shared_ptr<RunnerProgress> progress) {
  // Detached: a runner past a step's bound (a netlink request the kernel holds under
  // rtnl_lock, a read under net/) must not hold the daemon; the loop gives its PFs up.
  std::thread([channel = std::move(channel), busy = std::move(busy), names = std::move(names),
               pfs = std::move(pfs), in = std::move(in), host = std::move(host),
               udev = std::move(udev), progress = std::move(progress)]() mutable {
    Runner runner(std::move(channel), std::move(busy), std::move(names), std::move(in),
                  std::move(host), std::move(udev), std::move(progress));
    runner.run(std::move(pfs));
  }).detach();
}

}  // namespace vfready::daemon
