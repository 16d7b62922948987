// SPDX-License-Identifier: Apache-2.0
// Step "guids": every VF gets its GUID while unbound, then one probe; a bound VF with
// a wrong GUID is set, unbound and probed again, unless a pod uses it. The probes
// themselves run beside this step (pf_pass).
#include <algorithm>
#include <cerrno>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "vfready/host/errno_name.hpp"
#include "vfready/pipeline/call_answer.hpp"
#include "vfready/pipeline/steps.hpp"

namespace vfready::pipeline {

namespace {

model::Problem guid_set_failed(const PfRun& run, const model::VfTarget& vt, std::string text) {
  return model::problem(model::EventKind::kGuidSetFailed, std::move(text), run.target.pci.str(),
                        vt.pci ? vt.pci->str() : "");
}

// A call of step "guids" answered, waited for beside the VFs' requests, which go on
// meanwhile (their probes' answers taken as they come).
template <class T>
Task<T> answer_beside(std::unique_ptr<host::StartedCall<T>> call, GuidFeed& feed) {
  Wait both;
  while (!answer_due(*call, Wait::Clock::now())) {
    const auto& theirs = feed.waiting_on();
    both.fds.assign(theirs.fds.begin(), theirs.fds.end());
    if (call->fd() >= 0) {
      both.fds.push_back(call->fd());
    }
    both.until = std::min(theirs.until, call->until());
    co_await std::as_const(both);
    feed.resume();
  }
  co_return call->finish();
}

// Until the requests want more GUIDs: they go on meanwhile.
Task<Done> until_probes_want_more(GuidFeed& feed) {
  while (feed.enough_wait_for_probes()) {
    co_await feed.waiting_on();
    feed.resume();
  }
  co_return Done{};
}

}  // namespace

model::Problem ofed_problem(PfRun& run, const model::VfTarget& vt, const host::OfedGuidError& e) {
  if (e.err == host::kStuck) {
    return stuck_problem(run);
  }
  using File = host::OfedGuidError::File;
  const bool policy = e.file == File::kPolicy;
  const char* name = policy ? "policy" : e.file == File::kPort ? "port" : "node";
  return guid_set_failed(
      run, vt,
      "writing " +
          (policy ? std::string(model::to_string(run.target.guid_policy)) : vt.guid.str()) +
          " to sriov/" + std::to_string(vt.index) + "/" + name + " of PF " + run.target.pci.str() +
          " failed: " + host::errno_name(e.err));
}

std::optional<model::Problem> unbind_problem(PfRun& run, const model::PciAddress& vf, int err) {
  if (err == host::kStuck) {
    return stuck_problem(run);
  }
  if (err != 0) {
    return model::problem(model::EventKind::kUnbindFailed,
                          "unbinding VF " + vf.str() + " failed: " + host::errno_name(err),
                          run.target.pci.str(), vf.str());
  }
  return std::nullopt;
}

GuidPath guid_path(const model::PfInfo& info) {
  if (info.link_layer() == "Ethernet") {
    return GuidPath::kEthernet;
  }
  if (info.ofed_sriov) {
    return GuidPath::kOfedSysfs;
  }
  return info.ifindex != 0 ? GuidPath::kNetlink : GuidPath::kNone;
}

GuidAction guid_action(const model::VfTarget& target, const model::VfInfo& vf, GuidPath path,
                       std::string_view vf_driver) {
  if (vf.driver && *vf.driver != vf_driver) {
    return GuidAction::kInUse;
  }
  if (!vf.driver) {
    return GuidAction::kSetAndProbe;
  }
  if (path == GuidPath::kEthernet) {
    // Its netdev's address tells; none here (in a pod) or none planned: it stays.
    if (!vf.mac || !target.mac || vf.mac == target.mac) {
      return GuidAction::kKeep;
    }
    return in_use(vf, vf_driver) ? GuidAction::kConflict : GuidAction::kSetAndRebind;
  }
  // Bound: its GUID as read back (OFED's sriov/, or its RDMA device) tells. When
  // nothing can tell (netlink path, no RDMA device) it stays, and validation says the
  // GUID is unproven.
  if (vf.effective_guid == target.guid || (!vf.effective_guid && path != GuidPath::kOfedSysfs)) {
    return GuidAction::kKeep;
  }
  return in_use(vf, vf_driver) ? GuidAction::kConflict : GuidAction::kSetAndRebind;
}

std::optional<host::OfedGuidError> one_vf_error(const host::OfedGuidErrors& errors) {
  if (errors.empty()) {
    return host::OfedGuidError{host::OfedGuidError::File::kNode, EIO};
  }
  return errors.front();
}

host::LinkRequest vf_guid_request(const PfRun& run, const model::VfTarget& vt) {
  return {.kind = host::LinkRequest::Kind::kSetVfGuids,
          .ifindex = run.info.ifindex,
          .vf = vt.index,
          .node_guid = vt.guid,
          .port_guid = vt.guid};
}

StepResult netlink_guid_set(PfRun& run, const model::VfTarget& vt, int err) {
  if (err == host::kStuck) {
    return StepResult::failed(stuck_problem(run));  // rtnl_lock is held
  }
  if (err != 0) {
    return StepResult::failed(guid_set_failed(
        run, vt,
        "setting the GUID of VF " + std::to_string(vt.index) + " through netlink on " +
            run.info.netdev.value_or("?") + " failed: " + host::errno_name(err) +
            (err == EOPNOTSUPP
                 ? " (the PF's netdev is not IPoIB, and OFED's sriov sysfs is not there)"
                 : "")));
  }
  return StepResult::done();
}

StepResult no_guid_path(PfRun& run, const model::VfTarget& vt) {
  return StepResult::failed(
      guid_set_failed(run, vt,
                      "no way to set GUIDs on PF " + run.target.pci.str() +
                          ": no OFED sriov sysfs and no PF netdev for netlink"));
}

namespace {

// VFs that need only their GUID and a probe have their OFED files written together: the
// first alone, so that its probe starts at once, then as many as one message to a
// device-call helper holds (14 calls: four VFs' three files). The probes take far
// longer than the writes, so none waits for its GUID.
class OfedBatch {
 public:
  OfedBatch(PfRun& run, GuidFeed& feed) : run_(run), feed_(feed) {}
  [[nodiscard]] bool empty() const { return pending_.empty(); }
  // Whether the batch is full: write() is due.
  bool add(const model::VfTarget& vt, VfWork vs, const model::PciAddress& pci) {
    pending_.push_back({&vt, std::move(vs), pci});
    return pending_.size() >= batch_;
  }
  // Writes what waits; each VF goes to run.vfs in order and to its probe, even one
  // whose GUID could not be set (its problem keeps it from being ready).
  Task<Done> write() {
    if (pending_.empty()) {
      co_return Done{};
    }
    std::vector<std::pair<uint16_t, model::Guid>> vfs;
    vfs.reserve(pending_.size());
    for (const auto& p : pending_) {
      vfs.emplace_back(p.vt->index, p.vt->guid);
    }
    auto& status = run_.status;
    host::OfedGuidErrors errors;
    while (errors.size() < vfs.size()) {
      // A call stops at a failed write: the VFs after it go in the next.
      const auto rest = std::span(vfs).subspan(errors.size());
      auto written = answer_beside(
          run_.os.calls.start_set_vf_guids_ofed(run_.target.pci, rest, run_.target.guid_policy),
          feed_);
      const auto got = co_await written;
      errors.insert(errors.end(), got.begin(), got.end());
      if (got.empty()) {  // a host that reached none: the first is not written
        errors.push_back(one_vf_error(got));
      }
    }
    for (std::size_t i = 0; i < pending_.size(); ++i) {
      auto& p = pending_[i];
      if (i < errors.size() && errors[i]) {
        p.vs.problems.push_back(ofed_problem(run_, *p.vt, *errors[i]));
      }
      status.changes.guids_set += p.vs.problems.empty() ? 1 : 0;
      const std::size_t at = run_.vfs.size();
      run_.vfs.push_back(std::move(p.vs));
      feed_.to_probe(at);
    }
    pending_.clear();
    batch_ = kBatch;
    co_return Done{};
  }

 private:
  static constexpr std::size_t kBatch = 4;
  struct Pending {
    const model::VfTarget* vt;
    VfWork vs;
    model::PciAddress pci;
  };
  PfRun& run_;
  GuidFeed& feed_;
  std::vector<Pending> pending_;
  std::size_t batch_ = 1;
};

// The GUID of one VF, set by the PF's path (OFED's files as a started call): its
// problems, none when it is set.
Task<std::vector<model::Problem>> set_one_guid(PfRun& run, const model::VfTarget& vt,
                                               GuidFeed& feed) {
  const auto path = guid_path(run.info);
  if (path == GuidPath::kEthernet) {
    if (!vt.mac && !run.target.vf_port.any()) {
      co_return std::vector<model::Problem>{};  // nothing to set
    }
    auto set = answer_beside(run.os.links.start(vf_port_request(run, vt)), feed);
    const auto got = co_await set;
    co_return vf_port_set(run, vt, got.err).problems;
  }
  if (path == GuidPath::kNetlink) {
    auto set = answer_beside(run.os.links.start(vf_guid_request(run, vt)), feed);
    const auto got = co_await set;
    co_return netlink_guid_set(run, vt, got.err).problems;
  }
  if (path == GuidPath::kNone) {
    co_return no_guid_path(run, vt).problems;
  }
  const std::pair<uint16_t, model::Guid> guid{vt.index, vt.guid};
  auto written = answer_beside(run.os.calls.start_set_vf_guids_ofed(
                                   run.target.pci, std::span(&guid, 1), run.target.guid_policy),
                               feed);
  const auto errors = co_await written;
  std::vector<model::Problem> out;
  if (const auto error = one_vf_error(errors)) {
    out.push_back(ofed_problem(run, vt, *error));
  }
  co_return out;
}

// Unbinds VF `vf`, its netdev `ifindex` (0: none known) about to go: the problem, if any.
Task<std::optional<model::Problem>> unbind(PfRun& run, model::PciAddress vf, int ifindex,
                                           GuidFeed& feed) {
  run.os.udev.forget_added(vf, ifindex);  // the probe after waits for its own netdev
  auto unbound =
      answer_beside(run.os.calls.start_unbind_vf(run.target.pci, vf, run.info.vfs_driver()), feed);
  const int err = co_await unbound;
  co_return unbind_problem(run, vf, err);
}

// One VF that is not simply set and probed: kept, in use, a conflict, or set (netlink)
// and probed, or set, unbound and probed again.
Task<Done> assign_guid(PfRun& run, const model::VfTarget& vt, const model::VfInfo& vf,
                       GuidAction action, VfWork vs, GuidFeed& feed) {
  auto& status = run.status;
  if (action == GuidAction::kKeep || action == GuidAction::kInUse) {
    vs.in_use = action == GuidAction::kInUse ? in_use(vf, run.info.vfs_driver()) : model::VfUse{};
    run.vfs.push_back(std::move(vs));
    co_return Done{};
  }
  if (action == GuidAction::kConflict) {
    vs.problems.push_back(model::problem(
        model::EventKind::kGuidConflict,
        "VF " + vs.pci.str() + " has GUID " + vf.effective_guid.value_or(model::Guid{0}).str() +
            ", not " + vt.guid.str() + ", but a pod uses it: not rebinding",
        run.target.pci.str(), vs.pci.str()));
    run.vfs.push_back(std::move(vs));
    co_return Done{};
  }
  // A VF whose GUID could not be set is probed all the same (a VF nobody probes has no
  // netdev to report); its problem keeps it from being ready.
  auto set = set_one_guid(run, vt, feed);
  vs.problems = co_await set;
  const bool ethernet = guid_path(run.info) == GuidPath::kEthernet;
  if (vs.problems.empty() && (!ethernet || vt.mac || run.target.vf_port.any())) {
    ++(ethernet ? status.changes.macs_set : status.changes.guids_set);
  }
  if (action == GuidAction::kSetAndRebind) {
    auto unbound = unbind(run, vf.pci, vf.ifindex, feed);
    if (auto error = co_await unbound) {
      vs.problems.push_back(*error);
      run.vfs.push_back(std::move(vs));
      co_return Done{};
    }
    ++(ethernet ? status.changes.vfs_rebound_mac : status.changes.vfs_rebound);
  }
  const std::size_t at = run.vfs.size();
  run.vfs.push_back(std::move(vs));
  feed.to_probe(at);
  co_return Done{};
}

// A VF of the count that the pass has not read: the host's read reads every VF of the
// count, and step "vfs" places every VF it makes, so none should be; one that is is not
// written to on what is not known of it.
VfWork not_read(const PfRun& run, const model::VfTarget& vt, VfWork vs) {
  vs.pci = vt.pci.value_or(vs.pci);
  vs.problems.push_back(model::problem(model::EventKind::kVfMissing,
                                       "VF " + std::to_string(vt.index) + " of PF " +
                                           run.target.pci.str() +
                                           " is not among the VFs the pass read: left alone",
                                       run.target.pci.str(), vs.pci.str()));
  return vs;
}

}  // namespace

Task<Done> assign_guids(PfRun& run, GuidFeed& feed) {
  const auto path = guid_path(run.info);
  OfedBatch batch(run, feed);
  run.vfs.reserve(run.target.vf.size());
  for (const auto& vt : run.target.vf) {
    if (batch.empty()) {
      auto fed = until_probes_want_more(feed);  // before the next write
      co_await fed;
    }
    VfWork vs;
    vs.index = vt.index;
    if (vt.index >= run.info.vfs.size()) {
      auto first = batch.write();  // first: run.vfs keeps the VFs' order
      co_await first;
      run.vfs.push_back(not_read(run, vt, std::move(vs)));
      continue;
    }
    // The pass read the PF (and its VFs) just before: no second read.
    const auto& vf = run.info.vfs[vt.index];
    vs.pci = vf.pci;
    const auto action = guid_action(vt, vf, path, run.info.vfs_driver());
    if (action == GuidAction::kSetAndProbe && path == GuidPath::kOfedSysfs) {
      if (batch.add(vt, std::move(vs), vf.pci)) {
        auto full = batch.write();
        co_await full;
      }
      continue;
    }
    auto first = batch.write();  // first: run.vfs keeps the VFs' order
    co_await first;
    auto one = assign_guid(run, vt, vf, action, std::move(vs), feed);
    co_await one;
  }
  auto rest = batch.write();
  co_await rest;
  co_return Done{};
}

}  // namespace vfready::pipeline
