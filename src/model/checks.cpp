// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/checks.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <limits>
#include <string_view>

#include "nic_checks.hpp"

namespace vfready::model {

Verdict check_driver(const Config& config, const CompatTable& table, const HostInfo& host) {
  Verdict v;
  if (config.pfs.empty()) {
    return v;  // no PF to bring up: nothing depends on the driver (a fresh install's config)
  }
  for (const auto& m : config.required_modules) {
    if (!host.modules.contains(m)) {
      v.failures.push_back(problem(EventKind::kModuleMissing,
                                   "module " + m + " is not loaded: load it (modprobe " + m +
                                       ") and check the kernel log for why it did not load"));
    }
  }
  std::vector<std::string> symbols_by_module;
  for (const auto& p : scan_kernel_log(host.kernel_log)) {
    if (p.kind == KernelLogProblem::Kind::kUnknownSymbol) {
      v.failures.push_back(problem(EventKind::kDriverMismatch,
                                   "module " + p.module + " does not fit the running kernel " +
                                       host.kernel_release + ": the kernel log says \"" + p.line +
                                       "\": install the driver release built for this kernel "
                                       "(or the kernel it was built for)"));
    }
  }
  const auto kernel = Version::parse_prefix(host.kernel_release);
  const bool log_clean = v.failures.empty();
  for (const auto& [module, version_text] : host.modules) {
    if (!version_text || !kernel) {
      continue;  // in-tree modules carry no version; the kernel log speaks for them
    }
    auto version = Version::parse_prefix(*version_text);
    if (!version) {
      continue;
    }
    const auto* entry = table.find(module, version.value(), kernel.value());
    if (entry == nullptr || entry->compatible) {
      continue;
    }
    const auto what = "module " + module + " " + *version_text +
                      " is listed as incompatible with kernel " + host.kernel_release + " (" +
                      entry->source + "): " + entry->remedy;
    // The kernel log outranks the table: a clean log means the driver did load.
    (log_clean ? v.warnings : v.failures).push_back(problem(EventKind::kDriverMismatch, what));
  }
  return v;
}

namespace {

// The VFs of `target`, as the plan placed them and as the host has them.
std::vector<PciAddress> vf_addresses(const PfTarget& target, const PfInfo* info) {
  std::vector<PciAddress> out;
  for (const auto& vf : target.vf) {
    if (vf.pci) {
      out.push_back(*vf.pci);
    }
  }
  if (info != nullptr) {
    for (const auto& vf : info->vfs) {
      out.push_back(vf.pci);
    }
  }
  return out;
}

bool among(const std::vector<PciAddress>& list, const std::optional<PciAddress>& pci) {
  return pci && std::find(list.begin(), list.end(), *pci) != list.end();
}

}  // namespace

std::vector<Problem> failed_probes_elsewhere(const std::vector<std::string>& required,
                                             const std::vector<PfTarget>& targets,
                                             const HostInfo& host) {
  std::vector<PciAddress> ours;
  for (const auto& t : targets) {
    ours.push_back(t.pci);
    const auto vfs = vf_addresses(t, host.find(t.pci));
    ours.insert(ours.end(), vfs.begin(), vfs.end());
  }
  std::vector<Problem> out;
  constexpr std::size_t kMost = 10;
  for (const auto& p : scan_kernel_log(host.kernel_log)) {
    if (p.kind != KernelLogProblem::Kind::kProbeFailed || !p.pci || among(ours, p.pci) ||
        std::find(required.begin(), required.end(), p.module) == required.end()) {
      continue;
    }
    if (out.size() == kMost) {
      out.erase(out.begin());
    }
    out.push_back(problem(EventKind::kDriverProbeFailed,
                          "the kernel log shows " + p.module + " failed to probe " + p.pci->str() +
                              " (not selected): \"" + p.line + "\""));
  }
  return out;
}

std::vector<Problem> log_lines_of_pf(const PfTarget& target, const HostInfo& host) {
  std::vector<Problem> out;
  const auto vfs = vf_addresses(target, host.find(target.pci));
  const auto pci = target.pci.str();
  // The latest lines (a flapping device repeats them): the status stays small.
  constexpr std::size_t kMost = 10;
  for (const auto& p : scan_kernel_log(host.kernel_log)) {
    if (out.size() == kMost) {
      out.erase(out.begin());
    }
    if (p.pci == target.pci) {
      out.push_back(problem(EventKind::kDriverProbeFailed,
                            "the kernel log names PF " + pci + ": \"" + p.line + "\"", pci));
    } else if (among(vfs, p.pci)) {
      out.push_back(problem(
          EventKind::kDriverProbeFailed,
          "the kernel log names VF " + p.pci->str() + " of PF " + pci + ": \"" + p.line + "\"", pci,
          p.pci->str()));
    }
  }
  return out;
}

Verdict check_hardware(const PfTarget& target, const PfInfo* info, const Config& config,
                       const CompatTable& table, const HostInfo& host) {
  Verdict v;
  const auto pci = target.pci.str();
  if (info == nullptr) {
    v.failures.push_back(problem(EventKind::kPfMissing,
                                 "PF " + pci + " is not on this host: check the address in " +
                                     target.source + " (" + target.json_path + ") against lspci -D",
                                 pci));
    return v;
  }
  for (const auto& p : scan_kernel_log(host.kernel_log)) {
    if (p.pci != target.pci) {
      continue;
    }
    if (p.kind == KernelLogProblem::Kind::kProbeFailed) {
      v.failures.push_back(problem(EventKind::kDriverProbeFailed,
                                   "the driver failed to probe PF " + pci +
                                       ": the kernel log says \"" + p.line +
                                       "\": check the driver and firmware versions",
                                   pci));
    } else if (p.kind == KernelLogProblem::Kind::kDeviceError) {
      v.warnings.push_back(problem(EventKind::kDriverProbeFailed,
                                   "the kernel log names PF " + pci + ": \"" + p.line + "\"", pci));
    }
  }
  // Lines naming its VFs (a VF's failed probe from an earlier boot's pass, a firmware
  // error on one): warnings of the PF, each with its VF.
  const auto vfs = vf_addresses(target, info);
  for (const auto& p : scan_kernel_log(host.kernel_log)) {
    if (among(vfs, p.pci)) {
      v.warnings.push_back(problem(
          EventKind::kDriverProbeFailed,
          "the kernel log names VF " + p.pci->str() + " of PF " + pci + ": \"" + p.line + "\"", pci,
          p.pci->str()));
    }
  }
  if (!info->driver) {
    v.failures.push_back(problem(EventKind::kPfNoDriver,
                                 "PF " + pci + " has no driver bound: load " +
                                     (info->mlx5() ? std::string("mlx5_core") : "its driver") +
                                     " and check the kernel log for " + pci,
                                 pci));
    return v;
  }
  if (!info->netdev && !info->ib_device) {
    v.failures.push_back(problem(
        EventKind::kPfUnhealthy,
        "PF " + pci + " has driver " + *info->driver +
            " bound but neither a netdev nor an RDMA device: the driver is in an error state "
            "(after a firmware fatal error?); vfready writes nothing to it (each new VF would "
            "wait in the driver) until its netdev appears",
        pci));
    return v;
  }
  check_vf_driver(*info, v);
  if (!info->mlx5()) {
    check_link_layer(target, *info, v);
    check_capacity(target, *info, v);
    return v;  // mlxconfig's firmware, link type and SR-IOV settings are mlx5's
  }
  if (info->firmware_text && !info->firmware) {
    v.failures.push_back(problem(EventKind::kFirmwareUnreadable,
                                 "the firmware version of PF " + pci + " reads \"" +
                                     *info->firmware_text +
                                     "\", not major.minor.patch: vfready cannot check it "
                                     "against the minimum for its device",
                                 pci));
  }
  if (info->firmware) {
    std::optional<Version> minimum;
    std::string device_name;
    if (auto it = config.firmware_minimums.find(info->device);
        it != config.firmware_minimums.end()) {
      minimum = it->second;
    } else if (const auto* f = table.firmware_for(info->device)) {
      minimum = f->minimum;
      device_name = f->name;
    }
    if (minimum && *info->firmware < *minimum) {
      v.failures.push_back(problem(EventKind::kFirmwareTooOld,
                                   "firmware " + info->firmware->str() + " of PF " + pci +
                                       (device_name.empty() ? "" : " (" + device_name + ")") +
                                       " is older than the required " + minimum->str() +
                                       ": update it (mlxfwmanager -u, or flint -d " + pci +
                                       " burn)",
                                   pci));
    }
  }
  const auto wanted = to_string(target.link_layer);
  for (std::size_t p = 0; p < info->ports.size(); ++p) {
    if (const auto& err = info->ports[p].state_error; !err.empty()) {
      // state_show() asks the driver (ib_query_port()): a firmware that cannot answer it
      // is no device to write to, where the port is to be waited for (port 1, as the
      // pass waits for it); otherwise a warning.
      auto found = problem(
          EventKind::kHostReadFailed,
          "reading port " + std::to_string(p + 1) + " of PF " + pci + " (" +
              info->ib_device.value_or("?") + ") failed: " + err +
              ": the driver cannot query the port; see the kernel log (mlx5_core " + pci + ")",
          pci);
      (p == 0 && target.require_port_active ? v.failures : v.warnings).push_back(std::move(found));
    }
    const auto& layer = info->ports[p].link_layer;
    if (layer != wanted) {
      const auto type = target.link_layer == LinkLayer::kInfiniBand ? "1" : "2";
      v.failures.push_back(problem(
          layer == "Ethernet" ? EventKind::kEthernetFallback : EventKind::kLinkLayerMismatch,
          "port " + std::to_string(p + 1) + " of PF " + pci + " is " + layer + ", configured " +
              wanted + ": set it with mlxconfig -d " + pci + " set LINK_TYPE_P" +
              std::to_string(p + 1) + "=" + type + " and reset the firmware (mlxfwreset) or reboot",
          pci));
    }
  }
  if (!info->sriov) {
    v.failures.push_back(
        problem(EventKind::kSriovDisabled,
                "PF " + pci + " has no SR-IOV capability: enable it with mlxconfig -d " + pci +
                    " set SRIOV_EN=1 NUM_OF_VFS=" + std::to_string(target.vfs) + " and reboot",
                pci));
  } else if (info->totalvfs < target.vfs) {
    v.failures.push_back(
        problem(EventKind::kTooFewVfs,
                "PF " + pci + " offers " + std::to_string(info->totalvfs) + " VFs, " +
                    std::to_string(target.vfs) + " configured: raise it with mlxconfig -d " + pci +
                    " set NUM_OF_VFS=" + std::to_string(target.vfs) + " and reboot",
                pci));
  }
  return v;
}

}  // namespace vfready::model
