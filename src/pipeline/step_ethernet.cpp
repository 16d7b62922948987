// SPDX-License-Identifier: Apache-2.0
// Around step "vfs", what a PF of another driver than mlx5 needs before its VFs are probed
// (steps.hpp): its netdev up, and its VF driver loaded.
#include <algorithm>
#include <chrono>

#include "vfready/host/errno_name.hpp"
#include "vfready/pipeline/call_answer.hpp"
#include "vfready/pipeline/steps.hpp"

namespace vfready::pipeline {

Task<Done> pf_up(PfRun& run) {
  const bool macs = std::any_of(run.target.vf.begin(), run.target.vf.end(),
                                [](const model::VfTarget& vt) { return vt.mac.has_value(); });
  // A kernel before 6.2 renames no link that is up: a PF still to be renamed stays down
  // there (its VFs' MACs may then not take, and are re-probed when validation says so).
  const bool rename_pending = run.target.name && run.info.netdev != run.target.name->str();
  if (!macs || run.info.ifindex == 0 || (rename_pending && !run.renames_up)) {
    co_return Done{};
  }
  auto up = answer(
      run.os.links.start({.kind = host::LinkRequest::Kind::kSetUp, .ifindex = run.info.ifindex}));
  const auto got = co_await up;
  if (got.err == host::kStuck) {
    run.status.problems.push_back(stuck_problem(run));
  } else if (got.err != 0) {
    run.status.problems.push_back(
        model::problem(model::EventKind::kLinkConfigFailed,
                       "setting PF " + run.target.pci.str() + " (" + run.info.netdev.value_or("?") +
                           ") up, which its VFs' MACs need, failed: " + host::errno_name(got.err),
                       run.target.pci.str()));
  }
  co_return Done{};
}

Task<Done> vf_driver_loaded(PfRun& run) {
  if (run.info.vf_driver_loaded || run.info.vf_driver.empty() || run.target.vfs == 0) {
    co_return Done{};
  }
  const auto until = Wait::Clock::now() + std::chrono::milliseconds(run.config.timeouts.modules_ms);
  constexpr std::chrono::milliseconds kLookEvery{100};
  while (!run.os.reads.driver_loaded(run.info.vf_driver) && Wait::Clock::now() < until) {
    const auto later = Wait::time(std::min(until, Wait::Clock::now() + kLookEvery));
    co_await later;
  }
  co_return Done{};
}

}  // namespace vfready::pipeline
