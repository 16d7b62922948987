// SPDX-License-Identifier: Apache-2.0
#include "drift.hpp"

#include <algorithm>

namespace vfready::daemon {

namespace {

// The event of the PF's own netdev, judged against the name it should have: the one
// vfready gave it, or (when a pass found it renamed and could not name it back) the
// configured one.
std::optional<Drift> drift_of_pf(const model::PfStatus& pf, const host::LinkEvent& event) {
  if (event.removed) {
    return Drift{pf.pci.str(), "", pf.name,
                 "netdev " + pf.name + " of PF " + pf.pci.str() + " is gone"};
  }
  const auto& ours = pf.identity.configured_name.empty() ? pf.name : pf.identity.configured_name;
  if (event.name == ours) {
    return std::nullopt;
  }
  return Drift{pf.pci.str(),
               "",
               event.name,
               "PF " + pf.pci.str() + " was renamed from " + ours + " to " + event.name +
                   " by someone else: naming it back",
               true,
               ours};
}

// The event of one of its VFs' netdevs.
std::optional<Drift> drift_of_vf(const model::PfStatus& pf, const model::VfStatus& vf,
                                 const host::LinkEvent& event) {
  if (event.removed) {
    return Drift{pf.pci.str(), vf.pci.str(), vf.name,
                 "netdev " + vf.name + " of VF " + vf.pci.str() +
                     " is gone (unbound, or its driver reloaded)"};
  }
  // A VF whose last pass found it named otherwise (a rename that landed during or right
  // after that pass's own) still has drift to repair, whatever event comes.
  const bool misnamed = std::any_of(
      vf.problems.begin(), vf.problems.end(),
      [](const model::Problem& p) { return p.kind == model::EventKind::kNameMismatch; });
  if (misnamed) {
    return Drift{pf.pci.str(),
                 vf.pci.str(),
                 event.name,
                 "VF " + vf.pci.str() + " is named " + event.name +
                     ", not the name vfready gives it (renamed by someone else as it was "
                     "named back): naming it back",
                 true,
                 ""};
  }
  if (event.name == vf.name) {
    return std::nullopt;
  }
  return Drift{pf.pci.str(),
               vf.pci.str(),
               event.name,
               "VF " + vf.pci.str() + " was renamed from " + vf.name + " to " + event.name +
                   " by someone else: naming it back",
               true,
               vf.name};
}

}  // namespace

std::optional<Drift> drift_of(const model::DaemonStatus& status, const host::LinkEvent& event) {
  for (const auto& pf : status.pfs) {
    if (pf.state == model::PfState::kStuck) {
      continue;  // left alone: brought up again when its call returns
    }
    if (pf.ifindex == event.ifindex && !pf.name.empty()) {
      return drift_of_pf(pf, event);
    }
    for (const auto& vf : pf.vfs) {
      if (vf.ifindex == event.ifindex && !vf.name.empty()) {
        return drift_of_vf(pf, vf, event);
      }
    }
  }
  return std::nullopt;
}

bool knows_netdev(const model::DaemonStatus& status, int ifindex) {
  for (const auto& pf : status.pfs) {
    if (pf.ifindex == ifindex) {
      return true;
    }
    for (const auto& vf : pf.vfs) {
      if (vf.ifindex == ifindex) {
        return true;
      }
    }
  }
  return false;
}

std::optional<Drift> drift_of_new_netdev(const model::DaemonStatus& status, int ifindex,
                                         const std::string& name, const std::string& device_pci,
                                         const std::string& physfn_pci) {
  const auto& pf_pci = physfn_pci.empty() ? device_pci : physfn_pci;
  for (const auto& pf : status.pfs) {
    if (pf.pci.str() != pf_pci || pf.state == model::PfState::kStuck) {
      continue;
    }
    if (physfn_pci.empty()) {
      if (pf.ifindex == ifindex) {
        return std::nullopt;
      }
      return Drift{pf.pci.str(), "", name, "PF " + pf.pci.str() + " has a new netdev " + name};
    }
    for (const auto& vf : pf.vfs) {
      if (vf.pci.str() == device_pci && vf.ifindex == ifindex) {
        return std::nullopt;  // known: named by vfready
      }
    }
    return Drift{pf.pci.str(), device_pci, name,
                 "VF " + device_pci + " has a new netdev " + name + " (ifindex " +
                     std::to_string(ifindex) + "): re-applying its GUID, name and MTU"};
  }
  return std::nullopt;
}

}  // namespace vfready::daemon
