// SPDX-License-Identifier: Apache-2.0
// The hardware checks of a PF whatever its driver (nic_checks.hpp).
#include "nic_checks.hpp"

#include <cstdio>

namespace vfready::model {

// The module that takes the PF's VFs, found and loaded: without it a new VF stays
// unbound, and vfready's probe of it binds nothing.
void check_vf_driver(const PfInfo& info, Verdict& v) {
  if (!info.sriov || info.mlx5()) {
    return;  // mlx5_core's VFs are its own, and it is bound to the PF
  }
  const auto pci = info.pci.str();
  char ids[16];
  static_cast<void>(std::snprintf(ids, sizeof ids, "%04x:%04x", info.vendor, info.vf_device));
  if (info.vf_driver.empty()) {
    v.failures.push_back(
        problem(EventKind::kModuleMissing,
                "no module drives the VFs of PF " + pci + " (PCI ID " + ids +
                    "): modules.alias names none; install the VF driver for this NIC "
                    "(modinfo -F alias <module> lists the IDs a module takes)",
                pci));
  } else if (!info.vf_driver_loaded) {
    // udev loads it by the new VFs' modalias as it handles their add events; a pass
    // waits for that (timeouts.modules_ms) before it probes them.
    v.warnings.push_back(problem(EventKind::kModuleMissing,
                                 "module " + info.vf_driver + ", the driver of PF " + pci +
                                     "'s VFs (PCI ID " + ids +
                                     "), is not loaded yet: udev loads it as the VFs appear, "
                                     "and a pass waits up to timeouts.modules_ms for it",
                                 pci));
  }
}

// A PF that mlx5 does not drive: its RDMA ports' link layer where it has them (RoCE),
// else its netdev's.
void check_link_layer(const PfTarget& target, const PfInfo& info, Verdict& v) {
  const auto wanted = to_string(target.link_layer);
  const auto layer = info.link_layer();
  if (layer != wanted) {
    v.failures.push_back(
        problem(EventKind::kLinkLayerMismatch,
                "PF " + info.pci.str() + " is " +
                    (layer.empty() ? std::string("of an unknown link layer") : layer) +
                    ", configured " + wanted + ": check the entry's link_layer against ip -d link",
                info.pci.str()));
  }
}

void check_capacity(const PfTarget& target, const PfInfo& info, Verdict& v) {
  const auto pci = info.pci.str();
  if (!info.sriov) {
    v.failures.push_back(problem(EventKind::kSriovDisabled,
                                 "PF " + pci +
                                     " has no SR-IOV capability (no sriov_totalvfs): enable SR-IOV "
                                     "in the system firmware (BIOS) and the NIC's own settings",
                                 pci));
  } else if (info.totalvfs < target.vfs) {
    v.failures.push_back(problem(EventKind::kTooFewVfs,
                                 "PF " + pci + " offers " + std::to_string(info.totalvfs) +
                                     " VFs, " + std::to_string(target.vfs) +
                                     " configured: configure at most " +
                                     std::to_string(info.totalvfs),
                                 pci));
  }
}

}  // namespace vfready::model
