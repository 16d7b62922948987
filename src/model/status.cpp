// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/status.hpp"

#include <algorithm>

#include "vfready/model/printable.hpp"

namespace vfready::model {

const char* to_string(PfState state) {
  switch (state) {
    case PfState::kPending:
      return "pending";
    case PfState::kReady:
      return "ready";
    case PfState::kFailed:
      return "failed";
    case PfState::kStuck:
      return "stuck";
  }
  return "unknown";
}

const char* to_string(VfState state) {
  switch (state) {
    case VfState::kReady:
      return "ready";
    case VfState::kInUse:
      return "in use";
    case VfState::kFailed:
      return "failed";
    case VfState::kUnchecked:
      return "unchecked";
  }
  return "unknown";
}

std::string VfUse::text() const {
  switch (why) {
    case Why::kOtherDriver:
      return "bound to " + driver;
    case Why::kNetdevElsewhere:
      return "its netdev is in another network namespace";
    case Why::kNo:
      break;
  }
  return "";
}

VfState state_of(const VfStatus& vf) {
  if (!vf.problems.empty()) {
    return VfState::kFailed;
  }
  if (vf.in_use) {
    return VfState::kInUse;
  }
  return vf.checked ? VfState::kReady : VfState::kUnchecked;
}

const char* to_string(StepState state) {
  switch (state) {
    case StepState::kRunning:
      return "running";
    case StepState::kDone:
      return "done";
    case StepState::kFailed:
      return "failed";
  }
  return "unknown";
}

const char* to_string(DaemonState state) {
  switch (state) {
    case DaemonState::kStarting:
      return "starting";
    case DaemonState::kConfiguring:
      return "configuring";
    case DaemonState::kReady:
      return "ready";
    case DaemonState::kDegraded:
      return "degraded";
    case DaemonState::kFailed:
      return "failed";
  }
  return "unknown";
}

DaemonState state_of(Outcome outcome) {
  switch (outcome) {
    case Outcome::kReady:
      return DaemonState::kReady;
    case Outcome::kDegraded:
      return DaemonState::kDegraded;
    case Outcome::kFailed:
      break;
  }
  return DaemonState::kFailed;
}

const char* to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::kReady:
      return "ready";
    case Outcome::kDegraded:
      return "degraded";
    case Outcome::kFailed:
      return "failed";
  }
  return "unknown";
}

std::string describe(const PfChanges& c) {
  std::string out;
  const auto item = [&](uint32_t n, const char* one, const char* many) {
    if (n > 0) {
      out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + (n == 1 ? one : many);
    }
  };
  item(c.vfs_created, "VF created", "VFs created");
  item(c.guids_set, "GUID set", "GUIDs set");
  item(c.macs_set, "MAC set", "MACs set");
  item(c.vfs_rebound, "VF with a wrong GUID re-probed", "VFs with a wrong GUID re-probed");
  item(c.vfs_rebound_mac, "VF re-probed for its MAC", "VFs re-probed for their MACs");
  item(c.links_renamed, "link renamed", "links renamed");
  if (c.autoprobe_restored) {
    out += std::string(out.empty() ? "" : ", ") + "autoprobe turned back on";
  }
  return out;
}

PfChanges& operator+=(PfChanges& total, const PfChanges& more) {
  total.vfs_created += more.vfs_created;
  total.guids_set += more.guids_set;
  total.macs_set += more.macs_set;
  total.vfs_rebound += more.vfs_rebound;
  total.vfs_rebound_mac += more.vfs_rebound_mac;
  total.links_renamed += more.links_renamed;
  total.autoprobe_restored = total.autoprobe_restored || more.autoprobe_restored;
  return total;
}

Outcome outcome_of(const std::vector<PfStatus>& pfs) {
  const auto ready = std::count_if(pfs.begin(), pfs.end(),
                                   [](const PfStatus& p) { return p.state == PfState::kReady; });
  if (ready == static_cast<std::ptrdiff_t>(pfs.size())) {
    return Outcome::kReady;
  }
  return ready == 0 ? Outcome::kFailed : Outcome::kDegraded;
}

}  // namespace vfready::model

namespace vfready::model {

std::vector<StepTiming> overall_steps(const std::vector<PfStatus>& pfs) {
  std::vector<StepTiming> out;
  for (const auto& pf : pfs) {
    for (const auto& s : pf.steps) {
      auto it = std::find_if(out.begin(), out.end(),
                             [&](const StepTiming& o) { return o.name == s.name; });
      if (it == out.end()) {
        out.push_back(s);
        continue;
      }
      const double end = std::max(it->started_ms + it->elapsed_ms, s.started_ms + s.elapsed_ms);
      it->started_ms = std::min(it->started_ms, s.started_ms);
      it->elapsed_ms = end - it->started_ms;
      // failed outranks running, which outranks done
      if (s.state == StepState::kFailed ||
          (s.state == StepState::kRunning && it->state == StepState::kDone)) {
        it->state = s.state;
      }
    }
  }
  return out;
}

}  // namespace vfready::model

namespace vfready::model {

namespace {

// Calls f on every text of `status` that comes from the host or a user (S: DaemonStatus,
// or const DaemonStatus).
template <class S, class F>
void for_each_text(S& status, const F& f) {
  const auto problems = [&](auto& list) {
    for (auto& p : list) {
      f(p.pf);
      f(p.vf);
      f(p.text);
      f(p.remedy);
    }
  };
  f(status.version);
  f(status.config_file);
  f(status.text);
  problems(status.problems);
  for (auto& pf : status.pfs) {
    f(pf.name);
    f(pf.identity.configured_name);
    f(pf.identity.kernel_name);
    f(pf.link_layer);
    f(pf.rdma_device);
    for (auto& r : pf.vf_rdma) {
      f(r.device);
      f(r.port_state);
    }
    f(pf.port_state);
    f(pf.step);
    problems(pf.problems);
    problems(pf.warnings);
    for (auto& step : pf.steps) {
      f(step.name);
    }
    for (auto& vf : pf.vfs) {
      f(vf.name);
      for (auto& alt : vf.altnames) {
        f(alt);
      }
      f(vf.in_use.driver);
      problems(vf.problems);
    }
  }
  for (auto& e : status.recent_events) {
    f(e.pf);
    f(e.vf);
    f(e.message);
  }
}

}  // namespace

DaemonStatus printable(DaemonStatus status) {
  for_each_text(status, [](std::string& s) {
    if (!is_printable(s)) {
      s = printable(s);
    }
  });
  return status;
}

bool is_printable(const DaemonStatus& status) {
  bool all = true;
  for_each_text(status, [&](const std::string& s) { all = all && is_printable(s); });
  return all;
}

uint32_t vf_count(const DaemonStatus& status) {
  uint32_t n = 0;
  for (const auto& pf : status.pfs) {
    n += static_cast<uint32_t>(pf.vfs.size());
  }
  return n;
}

}  // namespace vfready::model
