// SPDX-License-Identifier: Apache-2.0
// The steps of a VF's request (vf_requests.hpp): each answers done, waiting or ended.
#include <algorithm>
#include <cerrno>

#include "vfready/host/errno_name.hpp"
#include "vfready/pipeline/call_answer.hpp"
#include "vfready/pipeline/steps.hpp"
#include "vfready/pipeline/vf_requests.hpp"

namespace vfready::pipeline {

namespace {

using Step = VfRequest::Step;
using Clock = VfRequest::Clock;

// udev's add is waited for a second (a quarter of the udev bound, if less) while udev is
// silent: one not announced by then (events lost, no udevd, the netdev moved away) is
// looked for in sysfs. While udev announces other functions' netdevs it is behind with
// its queue, not silent, and the add is waited for up to the udev bound: a look in sysfs
// and libudev for each VF costs some fifty sysfs round trips, which at 16 PFs of 127 VFs
// would keep udev further behind.
constexpr auto kAnnounced = std::chrono::seconds(1);

}  // namespace

VfRequests::Answer VfRequests::step(VfRequest& r, Clock::time_point now) {
  switch (r.step) {
    case Step::kProbe:
      return probe(r);
    case Step::kProbing:
      return probing(r, now);
    case Step::kReadBack:
      return reading_back(r, now);
    case Step::kNetdev:
      return netdev(r, now);
    case Step::kUdev:
      return udev(r, now);
    case Step::kName:
      return name(r, now);
    case Step::kValidate:
      return validate(r);
    case Step::kReprobe:
      return reprobe(r);
    case Step::kResetGuid:
      return resetting_guid(r, now);
    case Step::kUnbinding:
      return unbinding(r, now);
    case Step::kFinished:
    case Step::kToReadBack:
      break;
  }
  return Answer::kEnded;
}

VfRequests::Answer VfRequests::probe(VfRequest& r) {
  const auto& vs = run_.vfs[r.at];
  if (udev_fd_ >= 0) {
    // From its probe to the end of its udev step, the events of its netdev wake the pass.
    run_.os.udev.watch(udev_fd_, vs.pci);
  }
  r.probe_call = run_.os.calls.start_probe_vf(run_.target.pci, vs.pci);
  probing_ = static_cast<std::size_t>(&r - requests_.data());
  in_line_.erase(*probing_);  // its turn, whoever stepped it
  r.step = Step::kProbing;
  return Answer::kDone;
}

VfRequests::Answer VfRequests::probing(VfRequest& r, Clock::time_point now) {
  if (!answer_due(*r.probe_call, now)) {
    return Answer::kWaiting;
  }
  const int err = r.probe_call->finish();
  r.probe_call.reset();
  // The PF's next probe may start: what this one did is read beside it.
  probing_.reset();
  const auto& vs = run_.vfs[r.at];
  host::ProbedVf probed{.err = err, .bound = false, .driver = {}, .guid = std::nullopt};
  if (err != 0) {
    return probe_failed(r, *judge_probe(run_, vs.pci, probed).error);
  }
  r.read_call =
      run_.os.calls.start_read_probed_vf(run_.target.pci, vs.pci, vs.index, run_.info.ofed_sriov);
  r.step = Step::kReadBack;
  return Answer::kDone;
}

VfRequests::Answer VfRequests::reading_back(VfRequest& r, Clock::time_point now) {
  if (!answer_due(*r.read_call, now)) {
    return Answer::kWaiting;
  }
  auto& vs = run_.vfs[r.at];
  const auto read = r.read_call->finish();
  r.read_call.reset();
  if (read.err != 0 && read.err != host::kStuck) {
    // The probe was made; what it did could not be read (the driver failed the read of
    // the port's GUID, the helper died): the VF is not called ready on what is not known.
    const bool died = read.err == host::kHelperGone;
    const auto what = read.port_unread ? "the GUID its port took (OFED's sriov/" +
                                             std::to_string(vs.index) + "/port)"
                      : died ? std::string("its helper process ended before answering")
                             : std::string("whether a driver bound it (its uevent)");
    return probe_failed(r, model::problem(model::EventKind::kVfProbeFailed,
                                          "could not read what the probe of VF " + vs.pci.str() +
                                              " did, " + what + ": " + host::errno_name(read.err),
                                          run_.target.pci.str(), vs.pci.str()));
  }
  auto probe = judge_probe(run_, vs.pci, read);
  if (probe.error) {
    return probe_failed(r, std::move(*probe.error));
  }
  r.guid = probe.guid;
  now = Clock::now();  // the bounds below count from the probe's read-back
  vs.ifindex = 0;      // the probe made a new netdev
  vs.name.clear();
  const auto bound = std::chrono::milliseconds(run_.config.timeouts.udev_ms);
  r.udev_until = now + bound;
  r.netdev_until = now + announce_window();
  r.ask_at = std::min(r.udev_until, now + kAskLibudevAfter);
  r.announced = false;
  r.step = Step::kNetdev;
  return Answer::kDone;
}

VfRequests::Answer VfRequests::probe_failed(VfRequest& r, model::Problem problem) {
  stop_watching(r);
  run_.vfs[r.at].problems.push_back(std::move(problem));
  // A first probe that failed is read back with the VFs not probed, its netdev looked
  // for again; a second one ends the VF.
  r.step = r.reprobed ? Step::kFinished : Step::kToReadBack;
  return Answer::kEnded;
}

VfRequests::Answer VfRequests::netdev(VfRequest& r, Clock::time_point now) {
  auto& vs = run_.vfs[r.at];
  // udev's add names the netdev the probe made (ifindex and name) and says udev is done
  // with it: nothing to look up in sysfs or netlink.
  bool look = false;
  if (auto added = run_.os.udev.take_added(vs.pci, &look)) {
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
    run_.os.udev.watch_netdev(udev_fd_, vs.pci, vs.ifindex);
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
  stop_watching(r);  // the renames to come are the pass's own
  r.step = Step::kName;
  return Answer::kDone;
}

VfRequests::Answer VfRequests::name(VfRequest& r, Clock::time_point now) {
  if (!r.naming->task) {
    // The node's naming turn is the request's (advance_one() took it): held until its
    // naming ends.
    naming_line_.erase(static_cast<std::size_t>(&r - requests_.data()));
    r.naming->task.emplace(r.pf ? name_pf_request(run_) : name_vf(run_, r.at, r.announced));
    r.naming->task->start(r.naming->slot);
  } else if (r.naming->slot.resume && came(r.naming->slot.wait, now)) {
    std::exchange(r.naming->slot.resume, {}).resume();
  }
  if (!r.naming->task->done()) {
    return Answer::kWaiting;  // on its link request's answer, or on its turn
  }
  const auto naming = r.naming->task->take();
  r.naming.reset();
  if (r.pf) {
    run_.pf_named = true;
    r.step = Step::kFinished;
    return Answer::kEnded;
  }
  auto& vs = run_.vfs[r.at];
  if (naming == Naming::kStuck) {
    r.step = Step::kFinished;  // not judged: its PF is stuck (settle_stuck)
    return Answer::kEnded;
  }
  if (naming == Naming::kGone) {
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
  const bool right = validate_vf(run_, vs, r.guid);
  // A VF that is ours (its netdev is here) but does not use its GUID came up before its
  // GUID was set: someone else bound it between this pass's look and its own probe (a VF
  // re-created while drift is repaired), or it was mid-probe when the pass looked and
  // seemed a pod's. Once more: GUID, unbind, probe, and through the rest again.
  r.step =
      !right && !vs.in_use && vs.ifindex != 0 && !r.reprobed ? Step::kReprobe : Step::kFinished;
  if (r.step == Step::kFinished) {
    run_.named.erase(vs.ifindex);  // judged: its names are its report's now
  }
  return r.step == Step::kReprobe ? Answer::kDone : Answer::kEnded;
}

VfRequests::Answer VfRequests::reprobe(VfRequest& r) {
  // Its turn, held until its second probe has answered: one call into the device at a
  // time, as for the probes.
  auto& vs = run_.vfs[r.at];
  run_.status.warnings.push_back(reprobe_reason(run_, vs));
  vs.problems.clear();
  r.reprobed = true;
  probing_ = static_cast<std::size_t>(&r - requests_.data());
  in_line_.erase(*probing_);
  const auto& vt = run_.target.vf.at(vs.index);
  const auto path = guid_path(run_.info);
  if (path == GuidPath::kOfedSysfs) {
    const std::pair<uint16_t, model::Guid> guid{vt.index, vt.guid};
    r.guid_call =
        run_.os.calls.start_set_vf_guids_ofed(run_.target.pci, {&guid, 1}, run_.target.guid_policy);
    r.step = Step::kResetGuid;
    return Answer::kDone;
  }
  if (path == GuidPath::kNetlink) {
    r.link_guid_call = run_.os.links.start(vf_guid_request(run_, vt));
    r.step = Step::kResetGuid;
    return Answer::kDone;
  }
  if (path == GuidPath::kEthernet) {
    r.link_guid_call = run_.os.links.start(vf_port_request(run_, vt));
    r.step = Step::kResetGuid;
    return Answer::kDone;
  }
  return end_reprobe(r, std::move(no_guid_path(run_, vt).problems.front()));
}

VfRequests::Answer VfRequests::resetting_guid(VfRequest& r, Clock::time_point now) {
  if (r.link_guid_call) {
    if (!answer_due(*r.link_guid_call, now)) {
      return Answer::kWaiting;
    }
    const int err = r.link_guid_call->finish().err;
    r.link_guid_call.reset();
    const auto& vt = run_.target.vf.at(run_.vfs[r.at].index);
    const bool ethernet = guid_path(run_.info) == GuidPath::kEthernet;
    auto set = ethernet ? vf_port_set(run_, vt, err) : netlink_guid_set(run_, vt, err);
    if (set.is_failed()) {
      return end_reprobe(r, std::move(set.problems.front()));
    }
    ++(ethernet ? run_.status.changes.macs_set : run_.status.changes.guids_set);
    return start_unbind(r);
  }
  if (!answer_due(*r.guid_call, now)) {
    return Answer::kWaiting;
  }
  const auto errors = r.guid_call->finish();
  r.guid_call.reset();
  auto& vs = run_.vfs[r.at];
  if (const auto error = one_vf_error(errors)) {
    return end_reprobe(r, ofed_problem(run_, run_.target.vf.at(vs.index), *error));
  }
  ++run_.status.changes.guids_set;
  return start_unbind(r);
}

VfRequests::Answer VfRequests::start_unbind(VfRequest& r) {
  const auto& vs = run_.vfs[r.at];
  run_.os.udev.forget_added(vs.pci, vs.ifindex);  // its probe waits for its own netdev
  r.unbind_call = run_.os.calls.start_unbind_vf(run_.target.pci, vs.pci, run_.info.vfs_driver());
  r.step = Step::kUnbinding;
  return Answer::kDone;
}

VfRequests::Answer VfRequests::unbinding(VfRequest& r, Clock::time_point now) {
  if (!answer_due(*r.unbind_call, now)) {
    return Answer::kWaiting;
  }
  const int err = r.unbind_call->finish();
  r.unbind_call.reset();
  if (auto problem = unbind_problem(run_, run_.vfs[r.at].pci, err)) {
    return end_reprobe(r, std::move(*problem));
  }
  ++(guid_path(run_.info) == GuidPath::kEthernet ? run_.status.changes.vfs_rebound_mac
                                                 : run_.status.changes.vfs_rebound);
  return probe(r);
}

void VfRequests::stop_watching(VfRequest& r) {
  if (udev_fd_ >= 0) {
    run_.os.udev.unwatch(udev_fd_, run_.vfs[r.at].pci, r.watched);
  }
  r.watched = 0;
}

VfRequests::Answer VfRequests::end_reprobe(VfRequest& r, model::Problem problem) {
  run_.vfs[r.at].problems.push_back(std::move(problem));
  probing_.reset();
  r.step = Step::kFinished;
  return Answer::kEnded;
}

}  // namespace vfready::pipeline
