// SPDX-License-Identifier: Apache-2.0
// Step "validate" of an Ethernet PF: each VF's RDMA device (RoCE) and its port, read back
// (steps.hpp).
#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "vfready/host/errno_name.hpp"
#include "vfready/pipeline/call_answer.hpp"
#include "vfready/pipeline/steps.hpp"

namespace vfready::pipeline {

namespace {

void judge(PfRun& run, VfWork& vs, const host::VfRdmaRead& got) {
  if (got.device) {
    run.status.vf_rdma.push_back({vs.index, *got.device, got.state});
  }
  const auto said = "VF " + vs.pci.str() + (vs.name.empty() ? "" : " (" + vs.name + ")");
  if (!got.device) {
    // mlx5_ib makes an RDMA device for each ConnectX VF as it probes, as it made the
    // PF's; other NICs' VF drivers may make none, and a software
    // device (rdma_rxe) over the PF's netdev is the operator's, made per netdev.
    if (run.info.ib_device && !run.info.rdma_over_netdev && run.info.mlx5()) {
      vs.problems.push_back(model::problem(model::EventKind::kVfNoRdma,
                                           said + " has no RDMA device, where its PF has " +
                                               *run.info.ib_device + ": mlx5_ib did not take it",
                                           run.target.pci.str(), vs.pci.str()));
    }
    return;
  }
  if (got.unasked) {
    vs.problems.push_back(
        model::problem(model::EventKind::kHostReadFailed,
                       "the state of port 1 of RDMA device " + *got.device + " of " + said +
                           " was not read: no helper process made the read (" +
                           host::errno_name(got.err) + "); without it the VF is not ready",
                       run.target.pci.str(), vs.pci.str()));
  } else if (got.err != 0) {
    vs.problems.push_back(model::problem(model::EventKind::kVfNoRdma,
                                         "the state of port 1 of RDMA device " + *got.device +
                                             " of " + said +
                                             " cannot be read: " + host::errno_name(got.err),
                                         run.target.pci.str(), vs.pci.str()));
  }
}

}  // namespace

Task<StepResult> check_vf_rdma(PfRun& run) {
  if (guid_path(run.info) != GuidPath::kEthernet) {
    co_return StepResult::done();
  }
  run.status.vf_rdma.clear();
  std::vector<std::size_t> at;  // in run.vfs
  std::vector<host::VfNetdev> asked;
  for (std::size_t i = 0; i < run.vfs.size(); ++i) {
    const auto& vs = run.vfs[i];
    if (vs.checked && !vs.in_use && vs.problems.empty()) {
      at.push_back(i);
      asked.push_back({vs.index, vs.ifindex != 0 ? vs.name : std::string()});
    }
  }
  constexpr auto kBatch = host::SriovCalls::kMaxRdmaReads;
  for (std::size_t from = 0; from < asked.size(); from += kBatch) {
    const auto batch = std::span(asked).subspan(from, std::min(kBatch, asked.size() - from));
    auto read = answer(run.os.calls.start_read_vf_rdma(run.target.pci, batch));
    const auto got = co_await read;
    for (std::size_t k = 0; k < batch.size() && k < got.size(); ++k) {
      if (got[k].err == host::kStuck) {
        co_return StepResult::failed(stuck_problem(run));
      }
      judge(run, run.vfs[at[from + k]], got[k]);
    }
  }
  co_return StepResult::done();
}

}  // namespace vfready::pipeline
