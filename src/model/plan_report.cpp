// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/plan_report.hpp"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace vfready::model {

namespace {

const PfInfo* find_pf(const HostInfo& host, const PciAddress& pci) {
  const auto it = std::find_if(host.functions.begin(), host.functions.end(),
                               [&](const PfInfo& f) { return f.pci == pci; });
  return it == host.functions.end() ? nullptr : &*it;
}

std::vector<std::string> texts(const std::vector<AltName>& names) {
  std::vector<std::string> out;
  out.reserve(names.size());
  for (const auto& n : names) {
    out.push_back(n.str());
  }
  return out;
}

std::string sriov_writes(unsigned now, unsigned planned) {
  return now == planned ? "no sriov_numvfs write"
         : now == 0     ? "writes sriov_drivers_autoprobe=0, sriov_numvfs"
                        : "writes sriov_numvfs=0 then the count, if no VF is in use";
}

// What a pass would meet on this PF: stuck, the plan's problems, the hardware check's, and
// a port a pass would wait for and then fail the PF over.
void judge(PfPlanReport& r, const PfTarget& pf, const PfInfo* info, const Config& config,
           const CompatTable& table, const HostInfo& host) {
  if (info != nullptr && info->stuck) {
    r.problems.push_back(problem(EventKind::kPfStuck,
                                 "PF " + pf.pci.str() + " is stuck: " + *info->stuck +
                                     " did not return within " +
                                     std::to_string(config.timeouts.device_call_ms) + " ms",
                                 pf.pci.str()));
    return;
  }
  r.problems = pf.problems;
  if (!r.problems.empty()) {
    return;
  }
  auto verdict = check_hardware(pf, info, config, table, host);
  r.problems = std::move(verdict.failures);
  r.warnings = std::move(verdict.warnings);
  if (info != nullptr && pf.require_port_active && info->ib_device && r.port_state &&
      !port_active(*r.port_state)) {
    r.problems.push_back(problem(
        EventKind::kPortNotActive,
        "port 1 of PF " + pf.pci.str() + " is \"" + *r.port_state +
            "\", not ACTIVE: a pass would wait up to timeouts.port_active_ms (" +
            std::to_string(config.timeouts.port_active_ms) +
            " ms) for it and then fail the PF (check the cable and the subnet manager, or set "
            "\"require_port_active\": false in " +
            pf.source + " at " + pf.json_path + ")",
        pf.pci.str()));
  }
}

VfPlanReport report_vf(const VfTarget& vf, const PfInfo* info) {
  VfPlanReport r;
  r.index = vf.index;
  r.pci = vf.pci;
  if (vf.name) {
    r.name = vf.name->str();
  }
  r.guid = vf.guid;
  r.mac = vf.mac;
  r.altnames = texts(vf.altnames);
  r.mtu = vf.mtu;
  if (info != nullptr && vf.index < info->vfs.size()) {
    const auto& now = info->vfs[vf.index];
    r.name_now = now.netdev;
    r.guid_now = now.effective_guid;
    r.mac_now = now.mac;
  }
  return r;
}

}  // namespace

bool PlanReport::ok() const {
  return driver.ok() && std::all_of(pfs.begin(), pfs.end(),
                                    [](const PfPlanReport& pf) { return pf.problems.empty(); });
}

PlanReport report_plan(const Plan& plan, const HostInfo& host, const Config& config,
                       const CompatTable& table) {
  PlanReport report;
  report.config_files = config.files;
  report.compat_files = table.files;
  report.driver = check_driver(config, table, host);
  report.warnings = plan.warnings;
  for (const auto& pf : plan.pfs) {
    const auto* info = find_pf(host, pf.pci);
    PfPlanReport r;
    r.pci = pf.pci;
    r.present = info != nullptr;
    if (info != nullptr) {
      r.name_now = info->netdev;
      r.vfs_now = info->numvfs;
      if (!info->ports.empty()) {
        r.port_state = info->ports.front().state;
      }
    }
    if (pf.name) {
      r.name = pf.name->str();
    }
    r.vfs = pf.vfs;
    r.writes = sriov_writes(r.vfs_now, r.vfs);
    r.altnames = texts(pf.altnames);
    judge(r, pf, info, config, table, host);
    for (const auto& vf : pf.vf) {
      r.vf.push_back(report_vf(vf, info));
    }
    report.pfs.push_back(std::move(r));
  }
  return report;
}

namespace {

std::string join(const std::vector<std::string>& list, const char* none = "-") {
  std::string out;
  for (const auto& s : list) {
    out += (out.empty() ? "" : ",") + s;
  }
  return out.empty() ? none : out;
}

// "ibs0v0 (as is)", "ib0 -> ibs0v0", "- -> ibs0v0"
std::string change(const std::optional<std::string>& now, const std::string& planned) {
  return now == planned ? planned + " (as is)" : now.value_or("-") + " -> " + planned;
}

std::string vf_line(const VfPlanReport& vf) {
  char index[8];
  static_cast<void>(std::snprintf(index, sizeof index, "%-3u", unsigned{vf.index}));
  std::string line = std::string("  VF ") + index + " " + (vf.pci ? vf.pci->str() : "?") +
                     "  name " + change(vf.name_now, vf.name.value_or("(kernel name)"));
  if (!vf.guid.is_zero() || vf.guid_now) {  // an Ethernet VF has none planned
    line += "  GUID " +
            change(vf.guid_now ? std::optional(vf.guid_now->str()) : std::nullopt, vf.guid.str());
  }
  if (vf.mac) {
    line += "  MAC " +
            change(vf.mac_now ? std::optional(vf.mac_now->str()) : std::nullopt, vf.mac->str());
  }
  line += "  altnames " + join(vf.altnames);
  if (vf.mtu) {
    line += " mtu " + std::to_string(*vf.mtu);
  }
  return line + "\n";
}

nlohmann::json problems_json(const std::vector<Problem>& list) {
  auto out = nlohmann::json::array();
  for (const auto& p : list) {
    out.push_back({{"code", std::string(p.code())}, {"text", p.text}});
  }
  return out;
}

nlohmann::json or_null(const std::optional<std::string>& s) {
  return s ? nlohmann::json(*s) : nlohmann::json(nullptr);
}

}  // namespace

std::string plan_text(const PlanReport& report) {
  std::string out = "config: " + join(report.config_files) +
                    "\ncompatibility tables: " + join(report.compat_files, "none") + "\n";
  out += std::string("driver: ") + (report.driver.ok() ? "ok" : "FAILS") + "\n";
  for (const auto& f : report.driver.failures) {
    out += "  problem: " + f.text + "\n";
  }
  for (const auto& w : report.driver.warnings) {
    out += "  warning: " + w.text + "\n";
  }
  for (const auto& w : report.warnings) {
    out += "warning: " + w.text + "\n";
  }
  for (const auto& pf : report.pfs) {
    out += "PF " + pf.pci.str() + " " + (pf.present ? pf.name_now.value_or("-") : "absent") +
           " -> " + pf.name.value_or("(kernel name)") + ": " + std::to_string(pf.vfs_now) + " -> " +
           std::to_string(pf.vfs) + " VFs (" + pf.writes + ")" +
           (pf.port_state ? ", port " + *pf.port_state : "") + "\n";
    for (const auto& p : pf.problems) {
      out += "  problem: " + p.text + "\n";
    }
    for (const auto& w : pf.warnings) {
      out += "  warning: " + w.text + "\n";
    }
    if (!pf.altnames.empty()) {
      out += "  altnames " + join(pf.altnames) + "\n";
    }
    for (const auto& vf : pf.vf) {
      out += vf_line(vf);
    }
  }
  return out;
}

std::string plan_json(const PlanReport& report) {
  nlohmann::json out = {{"ok", report.ok()},
                        {"config_files", report.config_files},
                        {"compat_files", report.compat_files},
                        {"driver",
                         {{"ok", report.driver.ok()},
                          {"problems", problems_json(report.driver.failures)},
                          {"warnings", problems_json(report.driver.warnings)}}},
                        {"warnings", problems_json(report.warnings)},
                        {"pfs", nlohmann::json::array()}};
  for (const auto& pf : report.pfs) {
    nlohmann::json vfs = nlohmann::json::array();
    for (const auto& vf : pf.vf) {
      vfs.push_back({{"index", vf.index},
                     {"pci", vf.pci ? nlohmann::json(vf.pci->str()) : nlohmann::json(nullptr)},
                     {"name_now", or_null(vf.name_now)},
                     {"name", or_null(vf.name)},
                     {"guid_now", vf.guid_now ? nlohmann::json(vf.guid_now->str()) : nullptr},
                     {"guid", vf.guid.str()},
                     {"mac_now", vf.mac_now ? nlohmann::json(vf.mac_now->str()) : nullptr},
                     {"mac", vf.mac ? nlohmann::json(vf.mac->str()) : nullptr},
                     {"altnames", vf.altnames},
                     {"mtu", vf.mtu ? nlohmann::json(*vf.mtu) : nlohmann::json(nullptr)}});
    }
    out["pfs"].push_back({{"pci", pf.pci.str()},
                          {"present", pf.present},
                          {"name_now", or_null(pf.name_now)},
                          {"name", or_null(pf.name)},
                          {"vfs_now", pf.vfs_now},
                          {"vfs", pf.vfs},
                          {"writes", pf.writes},
                          {"port_state", or_null(pf.port_state)},
                          {"altnames", pf.altnames},
                          {"problems", problems_json(pf.problems)},
                          {"warnings", problems_json(pf.warnings)},
                          {"vf", vfs}});
  }
  // Host text is made valid UTF-8 by the caller's printable pass, never rejected here.
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string plan_error_json(const std::vector<std::string>& config_files,
                            const std::string& error) {
  return nlohmann::json({{"ok", false}, {"config_files", config_files}, {"error", error}})
             .dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

}  // namespace vfready::model
