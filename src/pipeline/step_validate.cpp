// SPDX-License-Identifier: Apache-2.0
// Step "validate": everything read back; what is not as configured is a problem.
#include <algorithm>
#include <span>

#include "vfready/pipeline/started_call.hpp"
#include "vfready/pipeline/steps.hpp"

namespace vfready::pipeline {

namespace {

bool active(const std::string& state) { return model::port_active(state); }

void add(PfRun& run, VfWork& vs, model::EventKind kind, std::string text) {
  vs.problems.push_back(model::problem(kind, std::move(text), run.status.pci.str(), vs.pci.str()));
}

}  // namespace

Task<host::ReadGuids> read_back_guids(PfRun& run, std::vector<uint16_t> indices) {
  host::ReadGuids out;
  out.reserve(indices.size());
  constexpr auto kBatch = host::SriovCalls::kMaxGuidReads;
  for (std::size_t at = 0; at < indices.size(); at += kBatch) {
    const auto batch = std::span(indices).subspan(at, std::min(kBatch, indices.size() - at));
    auto read =
        answer(run.os.calls.start_read_vf_guids(run.target.pci, batch, run.info.ofed_sriov));
    auto got = co_await read;
    got.resize(batch.size());
    out.insert(out.end(), got.begin(), got.end());
  }
  co_return out;
}

bool validate_vf(PfRun& run, VfWork& vs, const std::optional<model::Guid>& read_back) {
  auto& os = run.os;
  const auto& vt = run.target.vf.at(vs.index);
  // The GUID its port uses, read back: a VF is ready only with proof that it is its own.
  const auto& effective = read_back;
  vs.guid = effective;
  const bool guid_right = effective == vt.guid;
  if (!guid_right && vs.problems.empty() && !vs.in_use) {
    add(run, vs, model::EventKind::kGuidWrong,
        effective
            ? "VF " + vs.pci.str() + " uses GUID " + effective->str() + ", not " + vt.guid.str()
            : "the GUID of VF " + vs.pci.str() +
                  " cannot be read back (no OFED sriov/ files, and the VF has no RDMA "
                  "device: is mlx5_ib loaded?): without proof that it uses " +
                  vt.guid.str() + " it is not ready");
  }
  // False (reprobe it) only when its GUID is known wrong: when nothing can read it back,
  // another probe would not tell either.
  const bool keep = guid_right || !effective;
  if (vs.ifindex == 0) {
    return keep;
  }
  // Named in this pass: the kernel's answers then are the read-back (an acknowledged
  // change needs no second look). Else asked now.
  const auto named = run.named.find(vs.ifindex);
  const auto link =
      named != run.named.end() ? std::optional(named->second) : os.links.get(vs.ifindex);
  if (!link && os.calls.stuck(run.target.pci)) {
    vs.problems.push_back(stuck_problem(run));  // a lookup on rtnl_lock did not return
    return keep;
  }
  if (!link) {
    add(run, vs, model::EventKind::kNetdevGone, "netdev " + vs.name + " is gone");
    return keep;
  }
  vs.name = link->name;
  vs.altnames = link->altnames;
  if (vt.name && link->name != vt.name->str() && vs.problems.empty()) {
    add(run, vs, model::EventKind::kNameMismatch,
        "VF " + vs.pci.str() + " is named " + link->name + ", not " + vt.name->str());
  }
  for (const auto& alt : vt.altnames) {
    if (std::find(link->altnames.begin(), link->altnames.end(), alt.str()) ==
            link->altnames.end() &&
        vs.problems.empty()) {
      add(run, vs, model::EventKind::kNameMismatch,
          "VF " + vs.pci.str() + " lacks altname " + alt.str());
    }
  }
  return keep;
}

StepResult validate_pf(PfRun& run) {
  auto& status = run.status;
  const auto info = run.os.reads.read_pf(run.target.pci, /*with_vfs=*/false);
  if (!info) {
    return StepResult::failed(model::problem(model::EventKind::kPfVanished,
                                             "PF " + run.target.pci.str() + " vanished",
                                             run.target.pci.str()));
  }
  if (info->stuck) {
    return StepResult::failed(stuck_problem(run));
  }
  // The PF's name as netlink has it, as for its VFs: its own rename has just happened,
  // and netlink is where it happened.
  const auto link = status.ifindex != 0 ? run.os.links.get(status.ifindex) : std::nullopt;
  if (!link && run.os.calls.stuck(run.target.pci)) {
    return StepResult::failed(stuck_problem(run));  // a lookup on rtnl_lock did not return
  }
  status.name = link ? link->name : info->netdev.value_or("");
  status.link_layer = info->link_layer();
  status.port_state = info->ports.empty() ? "" : info->ports.front().state;
  run.info.ib_device = info->ib_device;
  return StepResult::done();
}

StepResult check_port_active(PfRun& run) {
  auto& status = run.status;
  if (!run.target.require_port_active || !run.info.ib_device || active(status.port_state)) {
    return StepResult::done();
  }
  // The subnet manager moves the port INIT -> ARMED -> ACTIVE; sysfs has no event for
  // it, so it is looked at again until ACTIVE or the bound.
  status.port_state =
      run.os.reads.port_state(run.target.pci, *run.info.ib_device, 1).value_or(status.port_state);
  if (active(status.port_state)) {
    return StepResult::done();
  }
  return StepResult::waiting("port 1 of PF " + run.target.pci.str() + " to become ACTIVE",
                             model::problem(model::EventKind::kPortNotActive,
                                            "port 1 of PF " + run.target.pci.str() + " is \"" +
                                                status.port_state + "\", not ACTIVE after " +
                                                std::to_string(run.config.timeouts.port_active_ms) +
                                                " ms: check the cable and the subnet manager",
                                            run.target.pci.str()),
                             std::chrono::milliseconds(250));
}

}  // namespace vfready::pipeline
