// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/checks.hpp"

#include <regex>

namespace vfready::model {

namespace {

bool is_rdma_module(const std::string& m) {
  return m.starts_with("mlx5") || m.starts_with("ib_") || m.starts_with("rdma") ||
         m == "mlx_compat";
}

// "6,123,456,-;text" -> "text"
std::string message_of(const std::string& line) {
  const auto semi = line.find(';');
  if (semi != std::string::npos && line.find(',') < semi) {
    return line.substr(semi + 1);
  }
  return line;
}

}  // namespace

std::vector<KernelLogProblem> scan_kernel_log(const std::vector<std::string>& lines) {
  static const std::regex kUnknown(R"(^(\S+?)(?: \S+)?: Unknown symbol (\S+) \(err (-?\d+)\))");
  static const std::regex kProbe(
      R"(^(\S+?)(?: \S+)?: probe (?:with driver \S+ )?(?:of (\S+) )?failed with error (-?\d+))");
  std::vector<KernelLogProblem> out;
  for (const auto& raw : lines) {
    const auto text = message_of(raw);
    std::smatch m;
    if (std::regex_search(text, m, kUnknown) && is_rdma_module(m[1])) {
      out.push_back({KernelLogProblem::Kind::kUnknownSymbol, m[1], m[2], std::nullopt,
                     std::stoi(m[3]), text});
    } else if (std::regex_search(text, m, kProbe) && is_rdma_module(m[1])) {
      // "mlx5_core 0000:18:00.0: probe with driver ... failed" names the device first.
      std::string device = m[2].matched ? m[2].str() : std::string();
      if (device.empty()) {
        const auto space = text.find(' ');
        const auto colon = text.find(": ");
        if (space != std::string::npos && space < colon) {
          device = text.substr(space + 1, colon - space - 1);
        }
      }
      auto pci = PciAddress::parse(device);
      out.push_back({KernelLogProblem::Kind::kProbeFailed, m[1], "",
                     pci ? std::optional<PciAddress>(pci.value()) : std::nullopt, std::stoi(m[3]),
                     text});
    }
  }
  return out;
}

Verdict check_driver(const Config& config, const CompatTable& table, const HostInfo& host) {
  Verdict v;
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
    if (p.kind == KernelLogProblem::Kind::kProbeFailed && p.pci == target.pci) {
      v.failures.push_back(problem(EventKind::kDriverProbeFailed,
                                   "the driver failed to probe PF " + pci +
                                       ": the kernel log says \"" + p.line +
                                       "\": check the driver and firmware versions",
                                   pci));
    }
  }
  if (!info->driver) {
    v.failures.push_back(problem(EventKind::kPfNoDriver,
                                 "PF " + pci +
                                     " has no driver bound: load mlx5_core and check the "
                                     "kernel log for " +
                                     pci,
                                 pci));
    return v;
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
