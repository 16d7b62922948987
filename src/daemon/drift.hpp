// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vfready/host/links.hpp"
#include "vfready/model/status.hpp"

// What a link or udev event means for the PFs vfready manages: nothing (its own work,
// or a device that is not ours), or drift of one PF that a reconcile pass repairs.
namespace vfready::daemon {

struct Drift {
  std::string pf;  // PCI address of the PF to reconcile
  std::string vf;  // PCI address of the VF concerned, if one
  std::string interface;
  std::string message;
  // A rename of a netdev vfready named, and the name vfready gave it ("": not known here).
  bool renamed = false;
  std::string renamed_from{};
};

// Where each netdev of a status is (its PF, and its VF if one), by ifindex: made once for
// many events judged against the same status (those of a pass, judged at its end),
// instead of a walk of every VF for each. Valid while that status's PFs and VFs stay as
// they were.
class NetdevIndex {
 public:
  struct At {
    int ifindex = 0;
    uint32_t pf = 0;
    int32_t vf = -1;  // -1: the PF's own netdev
  };
  explicit NetdevIndex(const model::DaemonStatus& status);
  // Every place `ifindex` is, in the status's order (none: empty).
  [[nodiscard]] std::span<const At> find(int ifindex) const;

 private:
  std::vector<At> at_;  // by ifindex, then in the status's order
};

// A netlink event about a netdev vfready knows (a PF's or a VF's): removed, or renamed
// away from the name vfready gave it. A stuck PF has no drift: it is left alone until
// its call returns, and brought up again then. `index`: of `status`, or null (each PF
// and VF is looked at).
std::optional<Drift> drift_of(const model::DaemonStatus& status, const NetdevIndex* index,
                              const host::LinkEvent& event);

// Whether `ifindex` is the netdev of a PF or VF in the status (ifindexes are unique in
// a namespace and not reused while the netdev lives). `index` as for drift_of.
bool knows_netdev(const model::DaemonStatus& status, const NetdevIndex* index, int ifindex);

// A netdev udev has just initialized, found (through sysfs) to belong to the device
// `device_pci`, a VF of `physfn_pci` when that is not empty: drift when it is a netdev of
// a configured PF or its VF that vfready does not know yet (a re-created VF).
std::optional<Drift> drift_of_new_netdev(const model::DaemonStatus& status, int ifindex,
                                         const std::string& name, const std::string& device_pci,
                                         const std::string& physfn_pci);

}  // namespace vfready::daemon
