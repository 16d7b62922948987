// SPDX-License-Identifier: Apache-2.0
// Step "vfs": make sriov_numvfs what the config says, never destroying VFs in use.
#include "vfready/host/errno_name.hpp"
#include "vfready/pipeline/call_answer.hpp"
#include "vfready/pipeline/steps.hpp"

namespace vfready::pipeline {

namespace {

// Why writing `count` failed, in words an operator can act on.
std::string numvfs_text(const model::PfTarget& target, uint16_t count, int err) {
  const auto pf = "PF " + target.pci.str();
  const auto wrote = "writing " + std::to_string(count) + " to sriov_numvfs of " + pf;
  switch (err) {
    case EBUSY:
      return wrote +
             " failed with EBUSY: VFs are enabled with another count, or the driver is busy";
    case ERANGE:
      return wrote + " failed with ERANGE: it is above sriov_totalvfs";
    case ENOENT:
      return "writing sriov_numvfs of " + pf +
             " failed with ENOENT: no driver is bound to it, or the driver cannot do SR-IOV";
    case EIO:
      return wrote + " failed with EIO: the driver could not create the VFs (see the kernel log)";
    default:
      return wrote + " failed: " + host::errno_name(err);
  }
}

model::Problem numvfs_error(PfRun& run, uint16_t count, int err) {
  const auto& target = run.target;
  if (err == host::kStuck) {
    return stuck_problem(run);
  }
  return model::problem(model::EventKind::kNumvfsFailed, numvfs_text(target, count, err),
                        target.pci.str());
}

// Where the VFs this pass has just made are: unbound (autoprobe is off), without
// netdevs or GUIDs. The plan placed them by the PF's First VF Offset and VF Stride:
// when the first and the last agree (two points fix both), the rest need no reading.
StepResult locate_new_vfs(PfRun& run) {
  const auto& target = run.target;
  auto& info = run.info;
  info.numvfs = target.vfs;
  info.ofed_sriov = run.os.reads.has_ofed_sriov(target.pci);
  info.vfs.clear();
  info.vfs.reserve(target.vfs);
  const auto placed = [&](uint16_t i) { return run.os.reads.vf_address(target.pci, i); };
  const bool as_planned = target.vfs > 1 && target.vf.size() == target.vfs &&
                          placed(0) == target.vf.front().pci &&
                          placed(target.vfs - 1) == target.vf.back().pci;
  for (uint16_t i = 0; i < target.vfs; ++i) {
    model::VfInfo vf;
    vf.index = i;
    const auto pci = as_planned ? target.vf[i].pci : placed(i);
    if (!pci) {
      return StepResult::failed(
          model::problem(model::EventKind::kVfMissing,
                         "VF " + std::to_string(i) + " of PF " + target.pci.str() +
                             " is missing after writing sriov_numvfs: see the kernel log",
                         target.pci.str()));
    }
    vf.pci = *pci;
    info.vfs.push_back(vf);
  }
  return StepResult::done();
}

// VFs in use, which a change of the count would destroy: the problem, if any is.
std::optional<model::Problem> vfs_in_use(const PfRun& run) {
  const auto& target = run.target;
  const auto& info = run.info;
  std::string busy;
  for (const auto& vf : info.vfs) {
    if (auto why = in_use(vf, run.info.vfs_driver())) {
      busy += (busy.empty() ? "" : "; ") + ("VF " + vf.pci.str() + ": " + why.text());
    }
  }
  if (busy.empty()) {
    return std::nullopt;
  }
  return model::problem(
      model::EventKind::kVfsInUse,
      "PF " + target.pci.str() + " has " + std::to_string(info.numvfs) + " VFs, " +
          std::to_string(target.vfs) +
          " configured, and changing the count destroys them all, but some are in use (" + busy +
          "): left as it is; free them or configure " + std::to_string(info.numvfs),
      target.pci.str());
}

model::Problem autoprobe_off_failed(PfRun& run, int err) {
  if (err == host::kStuck) {
    return stuck_problem(run);
  }
  return model::problem(model::EventKind::kAutoprobeFailed,
                        "cannot turn off sriov_drivers_autoprobe of PF " + run.target.pci.str() +
                            ": " + host::errno_name(err),
                        run.target.pci.str());
}

// One write of sriov_numvfs, its answer waited for by the pass.
Task<int> write_count(PfRun& run, uint16_t count) {
  ++run.status.sriov_writes;
  auto written = answer(run.os.calls.start_set_num_vfs(run.target.pci, count));
  co_return co_await written;
}

}  // namespace

Task<StepResult> ensure_vf_count(PfRun& run, AutoprobeGuard& autoprobe) {
  const auto& target = run.target;
  const auto& info = run.info;
  if (info.numvfs == target.vfs) {
    co_return StepResult::done();
  }
  if (info.numvfs != 0) {
    if (auto busy = vfs_in_use(run)) {
      co_return StepResult::failed(std::move(*busy));
    }
  }
  if (target.vfs > 0) {
    if (const int err = autoprobe.turn_off(); err != 0) {
      co_return StepResult::failed(autoprobe_off_failed(run, err));
    }
  }
  // A different nonzero count needs 0 first (the kernel answers EBUSY otherwise).
  if (info.numvfs != 0) {
    auto zero = write_count(run, 0);
    if (const int err = co_await zero; err != 0) {
      co_return StepResult::failed(numvfs_error(run, 0, err));
    }
  }
  if (target.vfs != 0) {
    auto count = write_count(run, target.vfs);
    if (const int err = co_await count; err != 0) {
      co_return StepResult::failed(numvfs_error(run, target.vfs, err));
    }
    run.status.changes.vfs_created += target.vfs;
  }
  co_return locate_new_vfs(run);
}

}  // namespace vfready::pipeline
