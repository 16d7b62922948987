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

// What request `r` waits on, added to `w`: its call's socket and deadline, or its naming's
// wait. Nothing for a step that waits on udev (VfRequests::waiting_on adds udev's fd once).
void add_wait_of(const VfRequest& r, Wait& w) {
  const auto on_call = [&w](const auto& call) {
    w.until = std::min(w.until, call->until());
    if (call->fd() >= 0) {
      w.fds.push_back(call->fd());
    }
  };
  switch (r.step) {
    case Step::kProbing:
      on_call(r.probe_call);
      break;
    case Step::kReadBack:
      on_call(r.read_call);
      break;
    case Step::kResetGuid:
      if (r.guid_call) {
        on_call(r.guid_call);
      } else {
        on_call(r.link_guid_call);
      }
      break;
    case Step::kUnbinding:
      on_call(r.unbind_call);
      break;
    case Step::kName:
      if (r.naming) {
        w.until = std::min(w.until, r.naming->slot.wait.until);
        w.fds.insert(w.fds.end(), r.naming->slot.wait.fds.begin(), r.naming->slot.wait.fds.end());
      }
      break;
    default:
      break;
  }
}

}  // namespace

VfRequests::VfRequests(PfRun& run, std::size_t expected) : run_(run) {
  requests_.reserve(expected);
  by_pci_.reserve(expected);
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

VfRequest* VfRequests::by_pci(const model::PciAddress& pci) {
  const auto it = std::lower_bound(by_pci_.begin(), by_pci_.end(), pci,
                                   [](const auto& e, const auto& a) { return e.first < a; });
  return it != by_pci_.end() && it->first == pci ? &requests_[it->second] : nullptr;
}

void VfRequests::add(std::size_t at, VfRequest::Step first) {
  const auto& pci = run_.vfs[at].pci;
  const auto it = std::lower_bound(by_pci_.begin(), by_pci_.end(), pci,
                                   [](const auto& e, const auto& a) { return e.first < a; });
  if (it != by_pci_.end() && it->first == pci) {
    it->second = requests_.size();
  } else {
    by_pci_.insert(it, {pci, requests_.size()});  // at the end, as VFs come in order
  }
  live_.push_back(requests_.size());
  ++unfinished_;
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

void VfRequests::add_pf_naming() {
  live_.push_back(requests_.size());
  ++unfinished_;
  requests_.push_back({});
  requests_.back().pf = true;
  requests_.back().step = Step::kName;
  if (advance_one(requests_.back())) {
    start_probes();
  }
}

bool VfRequests::ended() const {
  // Each request not ended waits in a line (to probe, for the naming turn), on a call,
  // or on udev (advance_one() lists it there); advance_one() counts those that end.
  return unfinished_ == 0;
}

bool VfRequests::waits(const VfRequest& r) {
  switch (r.step) {
    case Step::kProbing:
    case Step::kReadBack:
    case Step::kResetGuid:
    case Step::kUnbinding:
      return true;
    case Step::kName:
      return r.naming != nullptr;  // in its turn (without it, in the naming line)
    default:
      return false;
  }
}

bool VfRequests::waits_on_udev(const VfRequest& r) {
  return r.step == Step::kNetdev || r.step == Step::kUdev;
}

VfRequests::Clock::time_point VfRequests::udev_due(const VfRequest& r) {
  return r.step == Step::kNetdev ? r.netdev_until : std::min(r.ask_at, r.udev_until);
}

void VfRequests::list_waiting(VfRequest& r) {
  if (!r.listed && waits(r)) {
    r.listed = true;
    waiting_.push_back(static_cast<std::size_t>(&r - requests_.data()));
  }
  if (waits_on_udev(r)) {
    if (!r.on_udev) {
      r.on_udev = true;
      on_udev_.push_back(static_cast<std::size_t>(&r - requests_.data()));
    }
    udev_due_ = std::min(udev_due_, udev_due(r));
  }
}

void VfRequests::prune() {
  std::erase_if(live_, [&](std::size_t i) {
    return requests_[i].step == Step::kFinished || requests_[i].step == Step::kToReadBack;
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
    if (r.step == Step::kName && !r.naming && !take_naming_turn(r)) {
      naming_line_.insert(static_cast<std::size_t>(&r - requests_.data()));
      return moved;
    }
    const bool ended_before = r.step == Step::kFinished || r.step == Step::kToReadBack;
    const auto answer = step(r, Clock::now());
    if (answer == Answer::kEnded && !ended_before) {
      --unfinished_;
    }
    if (answer != Answer::kDone) {
      list_waiting(r);
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

bool VfRequests::take_naming_turn(VfRequest& r) {
  auto naming = std::make_unique<NamingUnderWay>(run_.names);
  if (!naming->turn.take()) {
    return false;
  }
  r.naming = std::move(naming);
  return true;
}

void VfRequests::start_namings() {
  while (!naming_line_.empty() && run_.names.turn_free()) {
    const auto next = *naming_line_.begin();
    naming_line_.erase(naming_line_.begin());
    advance_one(requests_[next]);
  }
}

void VfRequests::advance() {
  prune();
  start_probes();
  for (const auto i : live_) {
    if (advance_one(requests_[i])) {
      start_probes();  // it did work: the probe may have answered meanwhile
    }
  }
  start_probes();
}

void VfRequests::step_pending() {
  // Only the requests something happened to: those udev's events named (all, once
  // events were lost), those waiting on a call (their sockets are looked at), and those
  // waiting on udev whose bound came.
  woken_.clear();
  if (udev_fd_ >= 0 && run_.os.udev.take_woken(udev_fd_, &woken_)) {
    advance();
    start_namings();
    return;
  }
  const auto now = Clock::now();
  // Without an fd nothing tells which udev has heard of: those that wait on it look
  // each time.
  step_on_udev(udev_fd_ < 0, now);
  start_probes();
  for (const auto& pci : woken_) {
    if (auto* r = by_pci(pci); r != nullptr && advance_one(*r)) {
      start_probes();
    }
  }
  // By index: a step may list more (waiting_ grows as it is walked); those that no
  // longer wait leave the list as it is walked (one that stops waiting as it is
  // advanced here leaves it next turn).
  std::size_t kept = 0;
  for (std::size_t k = 0; k < waiting_.size(); ++k) {  // NOLINT(modernize-loop-convert)
    const auto i = waiting_[k];
    auto& r = requests_[i];
    r.listed = waits(r);
    if (!r.listed) {
      continue;
    }
    waiting_[kept++] = i;
    if (advance_one(r)) {
      start_probes();
    }
  }
  waiting_.resize(kept);
  // A probe that ended its request as it answered (a failed write) freed the turn
  // without moving on: the next in line starts now, not at some later event.
  start_probes();
  start_namings();
}

void VfRequests::step_on_udev(bool all, Clock::time_point now) {
  if (!all && now < udev_due_) {
    return;
  }
  udev_due_ = Clock::time_point::max();  // made again below, and by list_waiting()
  std::size_t kept = 0;
  for (std::size_t k = 0; k < on_udev_.size(); ++k) {  // NOLINT(modernize-loop-convert)
    const auto i = on_udev_[k];
    auto& r = requests_[i];
    if (!waits_on_udev(r)) {
      r.on_udev = false;
      continue;
    }
    on_udev_[kept++] = i;
    if ((all || now >= udev_due(r)) && advance_one(r)) {
      start_probes();
    }
    if (waits_on_udev(r)) {
      udev_due_ = std::min(udev_due_, udev_due(r));
    }
  }
  on_udev_.resize(kept);
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
    if (r.step == Step::kFinished && !r.pf) {
      out.insert(r.at);
    }
  }
  return out;
}

const Wait& VfRequests::waiting_on() {
  auto& w = wait_;
  w.fds.clear();
  w.until = Clock::time_point::max();
  bool on_udev = false;
  if (!on_udev_.empty()) {  // the most of them, while udev is behind
    w.until = std::min(w.until, udev_due_);
    on_udev = true;
  }
  for (const auto i : waiting_) {
    add_wait_of(requests_[i], w);
  }
  if (on_udev && udev_fd_ >= 0) {
    w.fds.push_back(udev_fd_);
  }
  if (!naming_line_.empty()) {
    // Woken when a naming ends anywhere on the node (or looking every 100 ms without
    // an eventfd).
    if (run_.names.turn_fd() >= 0) {
      w.fds.push_back(run_.names.turn_fd());
    } else {
      w.until = std::min(w.until, Clock::now() + std::chrono::milliseconds(100));
    }
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

}  // namespace vfready::pipeline
