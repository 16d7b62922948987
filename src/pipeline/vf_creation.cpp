// SPDX-License-Identifier: Apache-2.0
// Step "vfs": make sriov_numvfs what the config says, never destroying VFs in use.
#include "vfready/pipeline/pf_bringup.hpp"

namespace vfready::pipeline::detail {

namespace {

// Why writing `count` failed, in words an operator can act on.
std::string numvfs_error(const model::PfTarget& target, uint16_t count, int err) {
  const auto pf = "PF " + target.pci.str();
  switch (err) {
    case EBUSY:
      return "writing " + std::to_string(count) + " to sriov_numvfs of " + pf +
             " failed with EBUSY: VFs are enabled with another count, or the driver is busy";
    case ERANGE:
      return "writing " + std::to_string(count) + " to sriov_numvfs of " + pf +
             " failed with ERANGE: it is above sriov_totalvfs";
    case ENOENT:
      return "writing sriov_numvfs of " + pf +
             " failed with ENOENT: no driver is bound to it, or the driver cannot do SR-IOV";
    case EIO:
      return "writing " + std::to_string(count) + " to sriov_numvfs of " + pf +
             " failed with EIO: the driver could not create the VFs (see the kernel log)";
    default:
      return "writing " + std::to_string(count) + " to sriov_numvfs of " + pf +
             " failed: " + host::errno_name(err);
  }
}

// A VF is in use when a pod holds it: bound to another driver (vfio-pci), or bound to
// mlx5 with its netdev gone from our namespace (moved into a pod's).
std::optional<std::string> in_use(const model::VfInfo& vf) {
  if (vf.driver && *vf.driver != "mlx5_core") {
    return "VF " + vf.pci.str() + " is bound to " + *vf.driver;
  }
  if (vf.driver && !vf.netdev) {
    return "VF " + vf.pci.str() + " has its netdev in another namespace";
  }
  return std::nullopt;
}

}  // namespace

bool ensure_vf_count(const model::PfTarget& target, const model::PfInfo& info, host::Sysfs& sysfs,
                     model::PfStatus& status, bool* autoprobe_changed) {
  if (info.numvfs == target.vfs) {
    return true;
  }
  const auto dir = "bus/pci/devices/" + target.pci.str() + "/";
  if (info.numvfs != 0) {
    std::string busy;
    for (const auto& vf : info.vfs) {
      if (auto why = in_use(vf)) {
        busy += (busy.empty() ? "" : "; ") + *why;
      }
    }
    if (!busy.empty()) {
      status.problems.push_back("PF " + target.pci.str() + " has " + std::to_string(info.numvfs) +
                                " VFs, " + std::to_string(target.vfs) +
                                " configured, and changing the count destroys them all, "
                                "but some are in use (" +
                                busy + "): left as it is; free them or configure " +
                                std::to_string(info.numvfs));
      return false;
    }
  }
  // New VFs stay unbound, so that their GUIDs are set before their one probe.
  if (info.autoprobe && target.vfs > 0) {
    if (const int err = sysfs.write(dir + "sriov_drivers_autoprobe", "0"); err != 0) {
      status.problems.push_back("cannot turn off sriov_drivers_autoprobe of PF " +
                                target.pci.str() + ": " + host::errno_name(err));
      return false;
    }
    *autoprobe_changed = true;
  }
  const auto write_count = [&](uint16_t count) {
    ++status.sriov_writes;
    const int err = sysfs.write(dir + "sriov_numvfs", std::to_string(count));
    if (err != 0) {
      status.problems.push_back(numvfs_error(target, count, err));
    }
    return err == 0;
  };
  // A different nonzero count needs 0 first (the kernel answers EBUSY otherwise).
  if (info.numvfs != 0 && !write_count(0)) {
    return false;
  }
  if (target.vfs != 0 && !write_count(target.vfs)) {
    return false;
  }
  return true;
}

}  // namespace vfready::pipeline::detail
