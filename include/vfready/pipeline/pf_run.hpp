// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>

#include "vfready/model/config.hpp"
#include "vfready/model/inventory.hpp"
#include "vfready/model/plan.hpp"
#include "vfready/model/status.hpp"
#include "vfready/pipeline/name_registry.hpp"
#include "vfready/pipeline/pf_host.hpp"
#include "vfready/pipeline/vf_work.hpp"

namespace vfready::pipeline {

// One pass over one PF: what it aims at, what it works with, what it has found and
// done so far. Owned by the PF's pass (its task); each step reads and adds to it.
struct PfRun {
  const model::PfTarget& target;
  const model::Config& config;
  PfHost& os;
  NameRegistry& names;
  // The running kernel's release (uname -r): what it allows, where asking would be late.
  std::string kernel_release{};
  bool renames_up = true;    // model::renames_up_links(kernel_release), read once
  bool pf_named = false;     // the PF's netdev named (beside its VFs' probes)
  model::PfInfo info{};      // the PF as this pass knows it (read as the pass began)
  model::PfStatus status{};  // what the pass reports (its VFs from `vfs` as it ends)
  // The VFs as the pass works on them, in the target's order (status.vfs is written
  // from them at its end).
  std::vector<VfWork> vfs{};
  // VF netdevs as naming left them, by ifindex: what the kernel answered to its last
  // request for each (a lookup, or the acknowledged change). A VF validated right after
  // its naming takes them as read back (a change after that is drift, which the link
  // events report); cleared before anything that may wait. A VF's entry goes once it
  // is judged (its names are in its report then), so that a PF of 127 VFs holds only
  // those between naming and judgement.
  std::map<int, host::Link> named{};
  // The netdevs links_read_back() asked for and got no link: the errno (ENODEV: gone;
  // host::kStuck: the request, or one before it, did not return).
  std::map<int, int> link_errors{};
};

}  // namespace vfready::pipeline
