// SPDX-License-Identifier: Apache-2.0
// Step "names": the PF's netdev and each VF's named (namer.hpp), one naming at a time
// on the node (NameRegistry's turn).
#include <chrono>

#include "namer.hpp"
#include "vfready/pipeline/steps.hpp"

namespace vfready::pipeline {

// Waits for the naming turn (NameRegistry): woken as a turn ends, and looking again
// every 100 ms should it have no eventfd.
Task<Done> await_naming_turn(NamingTurn& turn, int turn_fd) {
  while (!turn.take()) {
    // Only without an eventfd does it look again on its own.
    co_await Wait::fd_or_time(turn_fd, turn_fd >= 0
                                           ? Wait::Clock::time_point::max()
                                           : Wait::Clock::now() + std::chrono::milliseconds(100));
  }
  co_return Done{};
}

Task<Done> name_pf(PfRun& run) {
  // The PF's netdev, found through sysfs as the VFs' are.
  const auto netdev = run.os.reads.netdev_of(run.target.pci);
  if (!netdev) {
    co_return Done{};
  }
  const auto& target = run.target;
  Namer namer(run.os, run.names, run.status.pci.str(), "", run.kernel_release, run.renames_up,
              run.status.problems);
  auto found = namer.look_up(*netdev);
  const auto link = co_await found;
  if (link) {
    auto applied = namer.apply(link->ifindex, target.name, target.altnames, target.mtu, {});
    co_await applied;
  }
  run.status.changes.links_renamed += namer.renamed();
  co_return Done{};
}

Task<Naming> name_pf_request(PfRun& run) {
  auto named = name_pf(run);
  co_await named;
  co_return Naming::kNamed;  // a stuck request left its problem (settle_stuck says it)
}

Task<Naming> name_vf(PfRun& run, std::size_t at, bool announced) {
  // run.vfs grows while VFs are added (their GUIDs set): the VF is looked up by its
  // place after each wait, never held by reference across one.
  const int ifindex = run.vfs[at].ifindex;
  if (ifindex == 0) {
    co_return Naming::kNamed;
  }
  const auto& vt = run.target.vf.at(run.vfs[at].index);
  std::vector<model::Problem> problems;
  Namer namer(run.os, run.names, run.status.pci.str(), run.vfs[at].pci.str(), run.kernel_release,
              run.renames_up, problems);
  const auto& name = run.vfs[at].name;
  auto applied = namer.apply(ifindex, vt.name, vt.altnames, vt.mtu,
                             announced && !name.empty() ? std::optional(name) : std::nullopt);
  co_await applied;
  auto& vs = run.vfs[at];
  run.status.changes.links_renamed += namer.renamed();
  const auto* link = namer.stuck() ? nullptr : namer.find(vs.ifindex);
  if (!namer.stuck() && link == nullptr) {
    run.named.erase(vs.ifindex);
    if (announced) {
      co_return Naming::kGone;  // nothing of it is the VF's to report
    }
  } else if (link != nullptr) {
    run.named[vs.ifindex] = *link;
  }
  vs.problems.insert(vs.problems.end(), problems.begin(), problems.end());
  co_return namer.stuck() ? Naming::kStuck : Naming::kNamed;
}

}  // namespace vfready::pipeline
