// SPDX-License-Identifier: Apache-2.0
#include "vfready/pipeline/vf_requests.hpp"

#include <unistd.h>

#include <algorithm>
#include <system_error>

#include "vfready/pipeline/steps.hpp"

namespace vfready::pipeline {

namespace {

using Step = VfRequest::Step;
using Clock = VfRequest::Clock;

// udev's add is waited for a second (a quarter of the udev bound, if less) while udev is
// silent: one not announced by then (events lost, no udevd, the netdev moved away) is
// looked for in sysfs. While udev announces other functions' netdevs it is behind with
// its queue, not silent, and the add is waited for up to the udev bound: a look in sysfs
// and libudev for each VF costs some fifty sysfs round trips, and at 16 PFs of 127 VFs
// those looks kept udev behind (`vfready_bench --only scale`, 5 ms probes: 49 FUSE
// requests a VF against 25, READY at 2.7 times the floor with renames against 1.7).
constexpr auto kAnnounced = std::chrono::seconds(1);
// A netdev whose udev event came before the pass listened would hold its wait to the
// bound: libudev is asked after a second, and at the bound.
constexpr auto kAskAfter = std::chrono::seconds(1);

}  // namespace

VfRequests::VfRequests(PfRun& run) : run_(run) {
  try {
    udev_fd_ = run.os.udev.subscribe();
  } catch (const std::system_error&) {
    udev_fd_ = -1;  // no descriptor to spare: the requests look again at their bounds
  }
}

VfRequests::~VfRequests() {
  if (udev_fd_ >= 0) {
    run_.os.udev.unsubscribe(udev_fd_);
  }
}

void VfRequests::add(std::size_t at, VfRequest::Step first) {
  const auto pci = run_.vfs[at].pci.str();
  if (udev_fd_ >= 0) {
    run_.os.udev.watch(udev_fd_, pci);
  }
  by_pci_[pci] = requests_.size();
  requests_.push_back({});
  requests_.back().at = at;
  requests_.back().step = first;
  // The new request as far as it goes, then those something happened to: a walk of every
  // request at each add grew with the square of a PF's VFs (130,000 steps for 2,032 VFs).
  if (advance_one(requests_.back())) {
    start_probes();
  }
  step_pending();
}

bool VfRequests::ended() const {
  return std::all_of(requests_.begin(), requests_.end(), [](const VfRequest& r) {
    return r.step == Step::kFinished || r.step == Step::kLeft;
  });
}

bool VfRequests::advance_one(VfRequest& r) {
  // A probe starts only when none is under way. The time is read for each step: one
  // before it may have taken a while (a netlink request, a read through a helper), and
  // bounds are counted from when a step really runs.
  bool moved = false;
  for (;;) {
    if ((r.step == Step::kProbe || r.step == Step::kReprobe) && probing_) {
      in_line_.insert(static_cast<std::size_t>(&r - requests_.data()));
      return moved;
    }
    if (step(r, Clock::now()) != Answer::kDone) {
      return moved;
    }
    moved = true;
  }
}

void VfRequests::start_probes() {
  // The probe under way first: the next one starts as soon as it has answered, before
  // the other VFs are named and read back. The first in line (in the order added) takes
  // the turn; a probe answered at once frees it for the next.
  if (probing_) {
    advance_one(requests_[*probing_]);
  }
  while (!probing_ && !in_line_.empty()) {
    const auto next = *in_line_.begin();
    in_line_.erase(in_line_.begin());
    advance_one(requests_[next]);
  }
}

void VfRequests::advance() {
  start_probes();
  for (auto& r : requests_) {
    if (advance_one(r)) {
      start_probes();  // it did work: the probe may have answered meanwhile
    }
  }
  start_probes();
}

bool VfRequests::due(const VfRequest& r, Clock::time_point now) {
  switch (r.step) {
    case Step::kProbing:
      return true;  // its socket is looked at
    case Step::kNetdev:
      return now >= r.netdev_until;
    case Step::kUdev:
      return now >= std::min(r.ask_at, r.udev_until);
    default:
      return false;
  }
}

void VfRequests::step_pending() {
  // Only the requests something happened to: the probe's, those udev's events named (all,
  // once events were lost), those whose bound came.
  woken_.clear();
  if (udev_fd_ >= 0 && run_.os.udev.take_woken(udev_fd_, &woken_)) {
    advance();
    return;
  }
  if (udev_fd_ < 0) {
    // Nothing tells which udev has heard of: those that wait on udev look each time.
    for (auto& r : requests_) {
      if ((r.step == Step::kNetdev || r.step == Step::kUdev) && advance_one(r)) {
        start_probes();
      }
    }
  }
  start_probes();
  for (const auto& pci : woken_) {
    if (const auto it = by_pci_.find(pci); it != by_pci_.end()) {
      if (advance_one(requests_[it->second])) {
        start_probes();
      }
    }
  }
  const auto now = Clock::now();
  for (auto& r : requests_) {
    if (due(r, now) && advance_one(r)) {
      start_probes();
    }
  }
}

std::set<std::size_t> VfRequests::run() {
  // add() has moved each request as far as it went: from here, waits and what they bring.
  while (!ended()) {
    wait_for(waiting_on());
    resume();
  }
  return finished();
}

std::set<std::size_t> VfRequests::finished() const {
  std::set<std::size_t> out;
  for (const auto& r : requests_) {
    if (r.step == Step::kFinished) {
      out.insert(r.at);
    }
  }
  return out;
}

Wait VfRequests::waiting_on() const {
  Wait w;
  bool on_udev = false;
  for (const auto& r : requests_) {
    if (r.step == Step::kProbing) {
      w.until = std::min(w.until, r.call->until());
      if (r.call->fd() >= 0) {
        w.fds.push_back(r.call->fd());
      }
    } else if (r.step == Step::kNetdev) {
      w.until = std::min(w.until, r.netdev_until);
      on_udev = true;
    } else if (r.step == Step::kUdev) {
      w.until = std::min(w.until, std::min(r.ask_at, r.udev_until));
      on_udev = true;
    }
  }
  if (on_udev && udev_fd_ >= 0) {
    w.fds.push_back(udev_fd_);
  }
  return w;
}

void VfRequests::resume() {
  if (udev_fd_ >= 0) {
    uint64_t count = 0;  // heard (or not: EAGAIN): take_woken says whom it concerns
    static_cast<void>(::read(udev_fd_, &count, sizeof count));
  }
  step_pending();
}

VfRequests::Answer VfRequests::step(VfRequest& r, Clock::time_point now) {
  switch (r.step) {
    case Step::kProbe:
      return probe(r);
    case Step::kProbing:
      return probing(r, now);
    case Step::kNetdev:
      return netdev(r, now);
    case Step::kUdev:
      return udev(r, now);
    case Step::kName:
      return name(r);
    case Step::kValidate:
      return validate(r);
    case Step::kReprobe:
      return reprobe(r);
    case Step::kFinished:
    case Step::kLeft:
      break;
  }
  return Answer::kEnded;
}

VfRequests::Answer VfRequests::probe(VfRequest& r) {
  const auto& vs = run_.vfs[r.at];
  r.call = run_.os.calls.start_probe_vf(run_.target.pci, vs.pci, vs.index, run_.info.ofed_sriov);
  probing_ = static_cast<std::size_t>(&r - requests_.data());
  in_line_.erase(*probing_);  // its turn, whoever stepped it
  r.step = Step::kProbing;
  return Answer::kDone;
}

VfRequests::Answer VfRequests::probing(VfRequest& r, Clock::time_point now) {
  if (r.call->fd() >= 0 && now < r.call->until() && !readable(r.call->fd())) {
    return Answer::kWaiting;
  }
  auto& vs = run_.vfs[r.at];
  const auto probe = judge_probe(run_, vs.pci, r.call->finish());
  r.call.reset();
  probing_.reset();
  if (probe.error) {
    vs.problems.push_back(*probe.error);
    // A first probe that failed is read back with the VFs not probed, its netdev looked
    // for again; a second one ends the VF.
    r.step = r.reprobed ? Step::kFinished : Step::kLeft;
    return Answer::kEnded;
  }
  r.guid = probe.guid;
  now = Clock::now();  // the bounds below count from the probe's answer
  vs.ifindex = 0;      // the probe made a new netdev
  vs.name.clear();
  const auto bound = std::chrono::milliseconds(run_.config.timeouts.udev_ms);
  r.udev_until = now + bound;
  r.netdev_until = now + announce_window();
  r.ask_at = std::min(r.udev_until, now + kAskAfter);
  r.announced = false;
  r.step = Step::kNetdev;
  return Answer::kDone;
}

VfRequests::Answer VfRequests::netdev(VfRequest& r, Clock::time_point now) {
  auto& vs = run_.vfs[r.at];
  // udev's add names the netdev the probe made (ifindex and name) and says udev is done
  // with it: nothing to look up in sysfs or netlink.
  bool look = false;
  if (auto added = run_.os.udev.take_added(vs.pci.str(), &look)) {
    vs.ifindex = added->ifindex;
    vs.name = std::move(added->name);
    r.announced = true;
  } else if (!look && now < waiting_for_add_until(r, now)) {
    return Answer::kWaiting;
  } else if (!look) {
    run_.os.udev.add_missed();
  }
  r.step = Step::kUdev;
  return Answer::kDone;
}

VfRequests::Clock::duration VfRequests::announce_window() const {
  return std::min<Clock::duration>(std::chrono::milliseconds(run_.config.timeouts.udev_ms) / 4,
                                   kAnnounced);
}

VfRequests::Clock::time_point VfRequests::waiting_for_add_until(VfRequest& r,
                                                                Clock::time_point now) {
  if (now >= r.netdev_until) {
    // Past the wait for a silent udev: on while udev is heard announcing others.
    const auto silent_at = run_.os.udev.last_add() + announce_window();
    if (silent_at > now) {
      r.netdev_until = std::min(silent_at, r.udev_until);
    }
  }
  return r.netdev_until;
}

VfRequests::Answer VfRequests::udev(VfRequest& r, Clock::time_point now) {
  auto& vs = run_.vfs[r.at];
  // A netdev known (announced, or looked up before) is looked at without settle_vf:
  // after a second and at the bound libudev is asked too (a missed event must not fail a
  // netdev udev is done with), and once events were lost, at each look, but once only.
  const bool known = !vs.in_use && vs.ifindex != 0;
  if (known && r.watched != vs.ifindex && udev_fd_ >= 0) {
    run_.os.udev.watch_netdev(udev_fd_, vs.pci.str(), vs.ifindex);
    r.watched = vs.ifindex;
  }
  if (known) {
    const bool ask = now >= r.ask_at;
    if (ask) {
      r.ask_at = r.udev_until;  // once more at the bound
    }
    if (!run_.os.udev.initialized_now(vs.ifindex, host::UdevWait::Netdev::kNew, ask) &&
        now < r.udev_until) {
      return Answer::kWaiting;
    }
  }
  auto result = settle_vf(run_, vs, host::UdevWait::Netdev::kNew);
  if (result.is_waiting()) {
    if (!known && now < r.udev_until) {
      return Answer::kDone;  // looked up just now: from here on it is known
    }
    result = StepResult::failed(result.on_timeout);
  }
  vs.problems.insert(vs.problems.end(), result.problems.begin(), result.problems.end());
  r.step = Step::kName;
  return Answer::kDone;
}

VfRequests::Answer VfRequests::name(VfRequest& r) {
  auto& vs = run_.vfs[r.at];
  if (name_vf(run_, vs, r.announced) == Naming::kGone) {
    // The netdev udev announced is gone by now: udev was behind and it was an older one
    // of the VF's, or it has moved to another namespace. sysfs says what the VF has.
    vs.ifindex = 0;
    vs.name.clear();
    r.announced = false;
    r.step = Step::kUdev;
    return Answer::kDone;
  }
  r.step = Step::kValidate;
  return Answer::kDone;
}

VfRequests::Answer VfRequests::validate(VfRequest& r) {
  auto& vs = run_.vfs[r.at];
  const bool right = validate_vf(run_, vs, &r.guid);
  // A VF that is ours (its netdev is here) but does not use its GUID came up before its
  // GUID was set: someone else bound it between this pass's look and its own probe (a VF
  // re-created while drift is repaired), or it was mid-probe when the pass looked and
  // seemed a pod's. Once more: GUID, unbind, probe, and through the rest again.
  r.step =
      !right && !vs.in_use && vs.ifindex != 0 && !r.reprobed ? Step::kReprobe : Step::kFinished;
  return r.step == Step::kReprobe ? Answer::kDone : Answer::kEnded;
}

VfRequests::Answer VfRequests::reprobe(VfRequest& r) {
  auto& vs = run_.vfs[r.at];
  vs.problems.clear();
  r.reprobed = true;
  if (auto error = prepare_reprobe(run_, vs.index, vs.pci, vs.ifindex)) {
    vs.problems.push_back(*error);
    in_line_.erase(static_cast<std::size_t>(&r - requests_.data()));
    r.step = Step::kFinished;
    return Answer::kEnded;
  }
  return probe(r);
}

}  // namespace vfready::pipeline
