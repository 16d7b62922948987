// SPDX-License-Identifier: Apache-2.0
// PFs left stuck by a call that did not return, brought up again once it has.
#include "stuck_pfs.hpp"

#include <poll.h>

#include <algorithm>

#include "log.hpp"
#include "service.hpp"
#include "vfready/host/errno_name.hpp"

namespace vfready::daemon {

HeldPfs pfs_held_by(const model::DaemonStatus& status, const std::string& key) {
  HeldPfs out;
  const bool a_pf = std::any_of(status.pfs.begin(), status.pfs.end(),
                                [&](const model::PfStatus& pf) { return pf.pci.str() == key; });
  if (a_pf) {
    out.one_pf = true;
    out.pfs.push_back(key);
    return out;
  }
  // And those still in a pass: they may end stuck by it after this return is seen.
  for (const auto& pf : status.pfs) {
    if (pf.state == model::PfState::kStuck || pf.state == model::PfState::kPending) {
      out.pfs.push_back(pf.pci.str());
    }
  }
  return out;
}

void Service::watch_returns() {
  if (options_.once) {
    return;
  }
  const int fd = inputs_.host_access->returns_fd(inputs_);
  if (fd < 0) {
    if (returns_watch_) {
      loop_.remove(*returns_watch_);
      returns_watch_.reset();
    }
    look_for_returns_later();
    return;
  }
  if (returns_watch_) {
    return;
  }
  try {
    returns_watch_ = loop_.add_fd(fd, POLLIN, [this](short) {
      loop_.remove(*returns_watch_);
      returns_watch_.reset();
      if (bringup_ && !bringup_->finished()) {
        return;  // the pass's end takes what returned, and watches again
      }
      if (take_returned()) {
        schedule_pass();
      }
      watch_returns();
    });
  } catch (const std::exception& e) {
    log::warn({}, std::string("cannot watch the calls left in drivers: ") + e.what());
    look_for_returns_later();
  }
}

void Service::look_for_returns_later() {
  const bool any = std::any_of(status_.pfs.begin(), status_.pfs.end(),
                               [](const auto& pf) { return pf.state == model::PfState::kStuck; });
  if (returns_looked_for_ || !any) {
    return;
  }
  returns_looked_for_ = true;
  loop_.add_timer(Clock::now() + std::chrono::seconds(1), [this] {
    returns_looked_for_ = false;
    if (take_returned()) {
      schedule_pass();
    }
    watch_returns();
  });
}

bool Service::take_returned() {
  const auto returned = inputs_.host_access->returned(inputs_);
  for (const auto& r : returned) {
    const auto took =
        std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - r.stuck.since);
    auto held = pfs_held_by(status_, r.stuck.device);
    if (r.err == host::kHelperGone && !held.one_pf) {
      // A netlink request's helper (keyed by rtnl_lock, not a PF): the PFs not ready.
      for (const auto& pf : status_.pfs) {
        if (pf.state != model::PfState::kReady) {
          held.pfs.push_back(pf.pci.str());
        }
      }
    }
    const auto text =
        r.err == host::kHelperGone
            ? "the helper process making " + r.stuck.call +
                  " died before it answered (vfready's, not the driver's)"
            : r.stuck.call + " returned after " + std::to_string(took.count()) + " s (" +
                  (r.err == 0 ? std::string("it succeeded") : host::errno_name(r.err)) + ")";
    if (held.one_pf) {
      log::info({.pf = r.stuck.device},
                "PF " + r.stuck.device + ": " + text + "; bringing the PF up again");
    } else {
      log::info({}, text + "; bringing the PFs it held up again (" +
                        std::to_string(held.pfs.size()) + ")");
    }
    dirty_.insert(held.pfs.begin(), held.pfs.end());
  }
  return !returned.empty();
}

bool Service::wait_for_stuck_at_boot() {
  const auto stuck = static_cast<std::size_t>(
      std::count_if(status_.pfs.begin(), status_.pfs.end(),
                    [](const auto& pf) { return pf.state == model::PfState::kStuck; }));
  if (stuck == 0) {
    return false;
  }
  // A restart would not help: its reads meet the same driver, and the calls left in the
  // kernel are what the PFs wait on. Each stuck PF is brought up again when its call
  // returns (watch_returns), and READY=1 follows once the node is ready; systemd's start
  // timeout bounds the wait (TimeoutStartSec=), kubelet staying back meanwhile.
  log::error({}, "not ready: " + std::to_string(stuck) + " of " +
                     std::to_string(status_.pfs.size()) +
                     " PFs wait on calls into their drivers that have not returned; each is "
                     "brought up again when its call returns, and READY=1 follows");
  return true;
}

}  // namespace vfready::daemon
