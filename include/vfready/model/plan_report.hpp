// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vfready/model/checks.hpp"
#include "vfready/model/compat_table.hpp"
#include "vfready/model/config.hpp"
#include "vfready/model/inventory.hpp"
#include "vfready/model/plan.hpp"

// What `vfreadyd --check-config` reports: the files it read, the driver's verdict, and
// per PF and VF what is there now and what a pass would make of it, with every problem
// the host already shows (a PF that fails its checks, a port that is not ACTIVE).
namespace vfready::model {

struct VfPlanReport {
  uint16_t index = 0;
  std::optional<PciAddress> pci;
  std::optional<std::string> name_now;  // its netdev's name now (nullopt: no VF, no netdev)
  std::optional<std::string> name;      // what the plan names it (nullopt: the kernel's)
  std::optional<Guid> guid_now;         // the GUID in effect now
  Guid guid{0};
  std::optional<Mac> mac_now;  // an Ethernet VF's netdev address now
  std::optional<Mac> mac;      // the MAC the plan gives it
  std::vector<std::string> altnames;
  std::optional<uint32_t> mtu;
};

struct PfPlanReport {
  PciAddress pci = PciAddress::from_parts(0, 0, 0, 0);
  bool present = false;
  std::optional<std::string> name_now;
  std::optional<std::string> name;  // nullopt: keeps the kernel's
  uint16_t vfs_now = 0;
  uint16_t vfs = 0;
  std::string writes;                     // what a pass would write to sriov_numvfs
  std::optional<std::string> port_state;  // "4: ACTIVE" as read
  std::vector<std::string> altnames;
  std::vector<Problem> problems;
  std::vector<Problem> warnings;
  std::vector<VfPlanReport> vf;
};

struct PlanReport {
  std::vector<std::string> config_files;
  std::vector<std::string> compat_files;
  Verdict driver;
  std::vector<Problem> warnings;  // of the plan: functions it left out
  std::vector<PfPlanReport> pfs;
  [[nodiscard]] bool ok() const;  // a pass would bring every configured PF up
};

// The report of `plan` against the host as read, judged as a pass would judge it.
PlanReport report_plan(const Plan& plan, const HostInfo& host, const Config& config,
                       const CompatTable& table);

// For a person: one line per PF and VF ("name ib0 -> ibs0v0"), each problem under its PF.
std::string plan_text(const PlanReport& report);

// For a program: the same as one JSON object (docs/configuration.md describes it).
std::string plan_json(const PlanReport& report);

// The JSON of a configuration that cannot be planned: {"ok": false, "error": ...}.
std::string plan_error_json(const std::vector<std::string>& config_files, const std::string& error);

}  // namespace vfready::model
