// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/node_publish.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>

namespace vfready::model {

namespace {

struct Counts {
  std::size_t pfs_ready = 0;
  std::size_t vfs_ready = 0;
  std::size_t vfs_configured = 0;
};

// VFs ready are those of ready PFs: a VF whose own checks passed on a PF whose port is
// down (or that failed otherwise) is not one a pod can use.
Counts counts_of(const DaemonStatus& status) {
  Counts c;
  for (const auto& pf : status.pfs) {
    c.vfs_configured += pf.identity.vfs_configured;
    if (pf.state != PfState::kReady) {
      continue;
    }
    ++c.pfs_ready;
    c.vfs_ready += static_cast<std::size_t>(
        std::count_if(pf.vfs.begin(), pf.vfs.end(),
                      [](const VfStatus& vf) { return state_of(vf) == VfState::kReady; }));
  }
  return c;
}

const char* boolean(bool b) { return b ? "true" : "false"; }

// A GUID read back as zero: the VF's port has none (a pod on it would hang).
bool zero_guid(const VfStatus& vf) { return vf.guid && vf.guid->is_zero(); }

// Metric families, each with its HELP, TYPE and samples in the order given.
class Exposition {
 public:
  void family(const char* name, const char* type, const char* help) {
    out_ += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
    name_ = name;
  }
  void sample(const std::string& labels, double value) {
    char number[32];
    // A whole number (counts, states: nearly every sample) as "%.17g" prints it, which
    // for one below 1e15 is its digits; the rest through snprintf.
    constexpr double kWhole = 1e15;
    if (value == std::trunc(value) && std::fabs(value) < kWhole &&
        !(value == 0 && std::signbit(value))) {  // "-0" is snprintf's
      const auto end = std::to_chars(number, number + sizeof number, static_cast<int64_t>(value));
      *end.ptr = '\0';
    } else {
      static_cast<void>(std::snprintf(number, sizeof number, "%.17g", value));
    }
    out_ += name_ + (labels.empty() ? "" : "{" + labels + "}") + " " + number + "\n";
  }
  [[nodiscard]] const std::string& text() const { return out_; }

 private:
  std::string out_;
  std::string name_;
};

std::string label(const char* key, const std::string& value) {
  return std::string(key) + "=\"" + prometheus_label_value(value) + "\"";
}

// The same labels for a PF whatever its netdev is called now: its configured name (or
// its PCI address when it has none), so that a rename or its repair starts no new series.
std::string pf_labels(const PfStatus& pf) {
  const auto& name =
      !pf.identity.configured_name.empty() ? pf.identity.configured_name : pf.pci.str();
  return label("pf", pf.pci.str()) + "," + label("name", name);
}

}  // namespace

std::string node_feature_labels(const DaemonStatus& status) {
  const auto c = counts_of(status);
  std::string out = "# Written by vfreadyd on every change of its status; do not edit.\n";
  const auto line = [&](const char* key, const std::string& value) {
    out += std::string("vfready.io/") + key + "=" + value + "\n";
  };
  // Ready for pods that need VFs: a node whose configuration selects no PF has none.
  line("ready", boolean(status.node_ready && !status.pfs.empty()));
  line("degraded", boolean(status.state == DaemonState::kDegraded));
  line("state", to_string(status.state));
  line("pfs", std::to_string(status.pfs.size()));
  line("pfs-ready", std::to_string(c.pfs_ready));
  line("vfs", std::to_string(c.vfs_ready));
  line("vfs-configured", std::to_string(c.vfs_configured));
  return out;
}

std::string prometheus_label_value(const std::string& value) {
  std::string out;
  for (char ch : value) {
    switch (ch) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string prometheus_metrics(const DaemonStatus& status, int64_t now_unix_ms) {
  Exposition m;
  m.family("vfready_info", "gauge", "vfreadyd's version (always 1).");
  m.sample(label("version", status.version), 1);
  m.family("vfready_node_ready", "gauge",
           "1 when the node passed its bring-up as systemd was told (READY=1), else 0.");
  m.sample("", status.node_ready ? 1 : 0);
  m.family("vfready_pf_ready", "gauge", "1 when the PF and its VFs are ready, else 0.");
  for (const auto& pf : status.pfs) {
    m.sample(pf_labels(pf), pf.state == PfState::kReady ? 1 : 0);
  }
  m.family("vfready_pf_state", "gauge", "1 for the PF's current state, 0 for the others.");
  for (const auto& pf : status.pfs) {
    for (auto s : {PfState::kPending, PfState::kReady, PfState::kFailed, PfState::kStuck}) {
      m.sample(pf_labels(pf) + "," + label("state", to_string(s)), pf.state == s ? 1 : 0);
    }
  }
  m.family("vfready_vfs", "gauge",
           "VFs of the PF by state (ready, in_use, failed, unchecked: its PF failed or got stuck "
           "first).");
  for (const auto& pf : status.pfs) {
    std::map<VfState, std::size_t> by;
    for (const auto& vf : pf.vfs) {
      ++by[state_of(vf)];
    }
    for (auto [s, word] :
         {std::pair{VfState::kReady, "ready"}, std::pair{VfState::kInUse, "in_use"},
          std::pair{VfState::kFailed, "failed"}, std::pair{VfState::kUnchecked, "unchecked"}}) {
      m.sample(pf_labels(pf) + "," + label("state", word), static_cast<double>(by[s]));
    }
  }
  m.family("vfready_vfs_configured", "gauge", "VFs the configuration asks of the PF.");
  for (const auto& pf : status.pfs) {
    m.sample(pf_labels(pf), pf.identity.vfs_configured);
  }
  m.family("vfready_vfs_zero_guid", "gauge", "VFs of the PF whose port GUID reads all zero.");
  for (const auto& pf : status.pfs) {
    m.sample(pf_labels(pf),
             static_cast<double>(std::count_if(pf.vfs.begin(), pf.vfs.end(), zero_guid)));
  }
  m.family("vfready_port_active", "gauge",
           "1 when the PF's port is ACTIVE, else 0; no sample when it was not read.");
  for (const auto& pf : status.pfs) {
    if (!pf.port_state.empty()) {
      m.sample(pf_labels(pf), pf.port_state.ends_with("ACTIVE") ? 1 : 0);
    }
  }
  m.family("vfready_problems", "gauge", "Problems now reported, by code (docs/systemd.md).");
  std::map<std::string, std::size_t> problems;
  const auto add = [&](const std::vector<Problem>& list) {
    for (const auto& p : list) {
      ++problems[std::string(p.code())];
    }
  };
  add(status.problems);
  for (const auto& pf : status.pfs) {
    add(pf.problems);
    for (const auto& vf : pf.vfs) {
      add(vf.problems);
    }
  }
  for (const auto& [code, n] : problems) {
    m.sample(label("code", code), static_cast<double>(n));
  }
  m.family("vfready_stuck_pfs", "gauge", "PFs whose driver call has not returned.");
  m.sample("", static_cast<double>(
                   std::count_if(status.pfs.begin(), status.pfs.end(),
                                 [](const PfStatus& pf) { return pf.state == PfState::kStuck; })));
  m.family("vfready_bringup_seconds", "gauge",
           "Seconds from vfreadyd's start to its first bring-up's outcome.");
  if (status.bringup_ms >= 0) {
    m.sample("", status.bringup_ms / 1000.0);
  }
  m.family("vfready_drift_repairs_total", "counter",
           "Changes under vfready after READY (renamed, re-created or rebound VFs), each "
           "repaired by a pass.");
  m.sample("", static_cast<double>(status.drift_events));
  m.family("vfready_config_generation", "gauge",
           "Configurations put in force: 1 at start, one more per reload applied.");
  m.sample("", status.config_generation);
  m.family("vfready_status_timestamp_seconds", "gauge",
           "When vfreadyd wrote this file (Unix time): a stale file means vfreadyd is gone.");
  m.sample("", static_cast<double>(now_unix_ms) / 1000.0);
  return m.text();
}

}  // namespace vfready::model
