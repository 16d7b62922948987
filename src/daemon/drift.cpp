// SPDX-License-Identifier: Apache-2.0
#include "drift.hpp"

#include <algorithm>

namespace vfready::daemon {

namespace {

// What a netdev vfready gave an MTU and altnames (`given`) lacks by the event of its link:
// the first difference, said with what is done about it; "" when it has all of them. The
// MTU is the link's now (DriftWatch asks). An altname counts as deleted only when an
// event shows it gone that an earlier event showed (altnames_gone), never for being
// missing from an event: the kernel sends no event when an altname is added to a link
// that is down (netdev_state_change() notifies only links that are up), so a VF's last
// event before its pass's altname stays without it, and may be read after the pass.
// `ipoib`: its MTU may be lowered by the kernel itself, to its broadcast group's, as the
// link comes up (ipoib_change_mtu()).
std::string given_taken(const std::vector<std::string>& altnames,
                        const std::optional<uint32_t>& given_mtu, const host::LinkEvent& event,
                        bool ipoib) {
  if (given_mtu && event.mtu != 0 && event.mtu != *given_mtu) {
    const auto mtu = "has MTU " + std::to_string(event.mtu) + ", not " + std::to_string(*given_mtu);
    return ipoib && event.mtu < *given_mtu
               ? mtu +
                     " (IPoIB lowers a link's MTU to its broadcast group's as it comes up, "
                     "or another tool changed it): setting it again and reading it back"
               : mtu + " (changed by someone else): setting it back";
  }
  for (const auto& alt : altnames) {
    const auto& gone = event.altnames_gone;
    if (std::find(gone.begin(), gone.end(), host::altname_key(alt)) != gone.end()) {
      return "lost its altname " + alt + " (deleted by someone else): adding it back";
    }
  }
  return "";
}

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
    const auto taken =
        given_taken(pf.given.altnames, pf.given.mtu, event, pf.link_layer == "InfiniBand");
    if (taken.empty()) {
      return std::nullopt;
    }
    return Drift{pf.pci.str(), "", event.name,
                 "PF " + pf.pci.str() + " (" + event.name + ") " + taken};
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
                                 const std::string& ours, const host::LinkEvent& event) {
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
  if (event.name == ours) {
    static const std::vector<std::string> kNone;
    const auto taken = given_taken(vf.given ? vf.altnames : kNone, vf.given_mtu, event,
                                   pf.link_layer == "InfiniBand");
    if (taken.empty()) {
      return std::nullopt;
    }
    return Drift{pf.pci.str(), vf.pci.str(), event.name,
                 "VF " + vf.pci.str() + " (" + event.name + ") " + taken};
  }
  return Drift{pf.pci.str(),
               vf.pci.str(),
               event.name,
               "VF " + vf.pci.str() + " was renamed from " + ours + " to " + event.name +
                   " by someone else: naming it back",
               true,
               ours};
}

}  // namespace

NetdevIndex::NetdevIndex(const model::DaemonStatus& status) {
  for (std::size_t p = 0; p < status.pfs.size(); ++p) {
    const auto& pf = status.pfs[p];
    at_.push_back({pf.ifindex, static_cast<uint32_t>(p), -1});
    for (std::size_t v = 0; v < pf.vfs.size(); ++v) {
      at_.push_back({pf.vfs[v].ifindex, static_cast<uint32_t>(p), static_cast<int32_t>(v)});
    }
  }
  std::stable_sort(at_.begin(), at_.end(),
                   [](const At& a, const At& b) { return a.ifindex < b.ifindex; });
}

std::span<const NetdevIndex::At> NetdevIndex::find(int ifindex) const {
  const auto [from, to] =
      std::equal_range(at_.begin(), at_.end(), At{ifindex, 0, 0},
                       [](const At& a, const At& b) { return a.ifindex < b.ifindex; });
  return {from, to};
}

namespace {

// Calls f(pf, vf or nullptr) for each place `ifindex` is, in the status's order, until f
// answers true.
template <class F>
void for_each_place(const model::DaemonStatus& status, const NetdevIndex* index, int ifindex,
                    const F& f) {
  if (index != nullptr) {
    for (const auto& at : index->find(ifindex)) {
      const auto& pf = status.pfs[at.pf];
      if (f(pf, at.vf < 0 ? nullptr : &pf.vfs[static_cast<std::size_t>(at.vf)])) {
        return;
      }
    }
    return;
  }
  for (const auto& pf : status.pfs) {
    if (pf.ifindex == ifindex && f(pf, nullptr)) {
      return;
    }
    for (const auto& vf : pf.vfs) {
      if (vf.ifindex == ifindex && f(pf, &vf)) {
        return;
      }
    }
  }
}

}  // namespace

std::optional<Drift> drift_of(const model::DaemonStatus& status, const NetdevIndex* index,
                              const host::LinkEvent& event) {
  std::optional<Drift> drift;
  for_each_place(
      status, index, event.ifindex, [&](const model::PfStatus& pf, const model::VfStatus* vf) {
        if (pf.state == model::PfState::kStuck) {
          return false;  // left alone: brought up again when its call returns
        }
        if (vf == nullptr && !pf.name.empty()) {
          drift = drift_of_pf(pf, event);
          return true;
        }
        if (vf != nullptr && !vf->name.empty()) {
          // The name vfready gave it: the row's, unless the row shows another
          // tool's (a name fight).
          const auto contested = status.contested_names.find(vf->pci.str());
          drift = drift_of_vf(
              pf, *vf, contested == status.contested_names.end() ? vf->name : contested->second,
              event);
          return true;
        }
        return false;
      });
  return drift;
}

bool knows_netdev(const model::DaemonStatus& status, const NetdevIndex* index, int ifindex) {
  bool known = false;
  for_each_place(status, index, ifindex, [&](const model::PfStatus&, const model::VfStatus*) {
    known = true;
    return true;
  });
  return known;
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
