// SPDX-License-Identifier: Apache-2.0
// Step "guids": every VF gets its GUID while unbound, then one probe; a bound VF with
// a wrong GUID is set, unbound and probed again, unless a pod uses it. The probes
// themselves are run by bring_up_pf.
#include "vfready/host/host_reader.hpp"
#include "vfready/pipeline/pf_bringup.hpp"

namespace vfready::pipeline::detail {

namespace {

// How GUIDs reach a VF on this PF.
enum class Backend { kOfedSysfs, kNetlink, kNone };

// Writes node and port GUID and the port policy through OFED's sysfs.
std::optional<std::string> set_ofed(host::Sysfs& sysfs, const std::string& dir, uint16_t vf,
                                    model::Guid guid, const std::string& policy) {
  const auto base = dir + "sriov/" + std::to_string(vf) + "/";
  for (const auto& [file, value] : {std::pair<const char*, std::string>{"node", guid.str()},
                                    {"port", guid.str()},
                                    {"policy", policy}}) {
    if (const int err = sysfs.write(base + file, value); err != 0) {
      return "writing " + value + " to " + base + file + " failed: " + host::errno_name(err);
    }
  }
  return std::nullopt;
}

// Unbinds a VF from mlx5_core; what went wrong, in words.
std::optional<std::string> unbind(host::Sysfs& sysfs, const model::PciAddress& vf) {
  if (const int err = sysfs.write("bus/pci/drivers/mlx5_core/unbind", vf.str()); err != 0) {
    return "unbinding VF " + vf.str() + " failed: " + host::errno_name(err);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> reprobe_with_guid(const model::PfTarget& target, PfHost& os,
                                             uint16_t index, const model::PciAddress& vf) {
  const auto dir = "bus/pci/devices/" + target.pci.str() + "/";
  const auto& vt = target.vf.at(index);
  if (auto error = set_ofed(os.sysfs, dir, index, vt.guid, target.guid_policy)) {
    return error;
  }
  if (auto error = unbind(os.sysfs, vf)) {
    return error;
  }
  return probe_vf(os.sysfs, vf);
}

std::optional<std::string> probe_vf(host::Sysfs& sysfs, const model::PciAddress& vf) {
  if (const int err = sysfs.write("bus/pci/drivers_probe", vf.str()); err != 0) {
    return "binding VF " + vf.str() + " failed: " + host::errno_name(err) +
           " (see the kernel log for its probe)";
  }
  return std::nullopt;
}

void assign_guids(const model::PfTarget& target, const model::PfInfo& info, PfHost& os,
                  model::PfStatus& status, const ToProbeFn& to_probe) {
  const auto dir = "bus/pci/devices/" + target.pci.str() + "/";
  Backend backend = Backend::kNone;
  if (info.ofed_sriov) {
    backend = Backend::kOfedSysfs;
  } else if (info.ifindex != 0) {
    backend = Backend::kNetlink;
  }
  for (const auto& vt : target.vf) {
    model::VfStatus vs;
    vs.index = vt.index;
    // The step read the PF (and its VFs) just before: no second read.
    const auto vf =
        vt.index < info.vfs.size() ? info.vfs[vt.index] : host::read_vf(os.sysfs, dir, vt.index);
    vs.pci = vf.pci.str();
    const auto done = [&] { status.vfs.push_back(vs); };
    if (vf.driver && *vf.driver != "mlx5_core") {
      vs.in_use = "bound to " + *vf.driver;
      done();
      continue;
    }
    const bool bound = vf.driver.has_value();
    const bool right = vf.effective_guid == vt.guid;
    if (bound && (right || backend != Backend::kOfedSysfs)) {
      // Right already; with netlink there is no read-back to tell, so a bound VF stays.
      done();
      continue;
    }
    if (bound && !vf.netdev) {
      vs.problems.push_back("VF " + vs.pci + " has GUID " +
                            vf.effective_guid.value_or(model::Guid{0}).str() + ", not " +
                            vt.guid.str() + ", but a pod uses it: not rebinding");
      status.events[vs.problems.back()] = model::EventKind::kGuidConflict;
      done();
      continue;
    }
    std::optional<std::string> error;
    switch (backend) {
      case Backend::kOfedSysfs:
        error = set_ofed(os.sysfs, dir, vt.index, vt.guid, target.guid_policy);
        break;
      case Backend::kNetlink:
        if (const int err = os.links.set_vf_guids(info.ifindex, vt.index, vt.guid, vt.guid);
            err != 0) {
          error = "setting the GUID of VF " + std::to_string(vt.index) + " through netlink on " +
                  info.netdev.value_or("?") + " failed: " + host::errno_name(err) +
                  (err == EOPNOTSUPP ? " (the PF's netdev is not IPoIB, and OFED's sriov sysfs "
                                       "is not there)"
                                     : "");
        }
        break;
      case Backend::kNone:
        error = "no way to set GUIDs on PF " + target.pci.str() +
                ": no OFED sriov sysfs and no PF netdev for netlink";
        break;
    }
    if (error) {
      vs.problems.push_back(*error);
    }
    if (bound) {
      if (auto unbind_error = unbind(os.sysfs, vf.pci)) {
        vs.problems.push_back(*unbind_error);
        done();
        continue;
      }
    }
    const std::size_t at = status.vfs.size();
    done();
    to_probe(at, vf.pci);
  }
}

}  // namespace vfready::pipeline::detail
