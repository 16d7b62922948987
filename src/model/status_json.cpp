// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/status_json.hpp"

#include <algorithm>

namespace vfready::model {

namespace {

nlohmann::json to_json(const StepTiming& s) {
  return {{"name", s.name},
          {"state", to_string(s.state)},
          {"started_ms", s.started_ms},
          {"elapsed_ms", s.elapsed_ms}};
}

nlohmann::json steps_json(const std::vector<StepTiming>& steps) {
  auto out = nlohmann::json::array();
  for (const auto& s : steps) {
    out.push_back(to_json(s));
  }
  return out;
}

// Each problem with its stable code, MESSAGE_ID and remedy.
nlohmann::json details(const std::vector<Problem>& problems) {
  auto out = nlohmann::json::array();
  for (const auto& p : problems) {
    out.push_back({{"code", p.code()},
                   {"message_id", event_info(p.kind).message_id},
                   {"pf", p.pf},
                   {"vf", p.vf},
                   {"text", p.text},
                   {"remedy", p.remedy}});
  }
  return out;
}

void add_events(nlohmann::json& events, const std::vector<Problem>& problems) {
  for (const auto& p : problems) {
    events.push_back({{"event", p.code()}, {"message", p.text}});
  }
}

}  // namespace

nlohmann::json to_json(const VfStatus& vf) {
  return {{"index", vf.index},
          {"pci", vf.pci.str()},
          {"name", vf.name},
          {"altnames", vf.altnames},
          {"guid", vf.guid},
          {"ifindex", vf.ifindex},
          {"state", to_string(state_of(vf))},
          {"in_use", vf.in_use},
          {"problems", texts(vf.problems)},
          {"problem_details", details(vf.problems)}};
}

nlohmann::json to_json(const PfStatus& pf) {
  auto vfs = nlohmann::json::array();
  for (const auto& vf : pf.vfs) {
    vfs.push_back(to_json(vf));
  }
  // Every problem and warning of the PF and its VFs, by its code.
  auto events = nlohmann::json::array();
  add_events(events, pf.problems);
  add_events(events, pf.warnings);
  for (const auto& vf : pf.vfs) {
    add_events(events, vf.problems);
  }
  return {{"pci", pf.pci.str()},
          {"name", pf.name},
          {"state", to_string(pf.state)},
          {"step", pf.step},
          {"link_layer", pf.link_layer},
          {"port_state", pf.port_state},
          {"problems", texts(pf.problems)},
          {"problem_details", details(pf.problems)},
          {"warnings", texts(pf.warnings)},
          {"warning_details", details(pf.warnings)},
          {"events", events},
          {"steps", steps_json(pf.steps)},
          {"elapsed_ms", pf.elapsed_ms},
          {"vfs", vfs}};
}

nlohmann::json to_json(const DaemonStatus& status) {
  auto pfs = nlohmann::json::array();
  std::size_t vfs = 0;
  for (const auto& pf : status.pfs) {
    pfs.push_back(to_json(pf));
    vfs += pf.vfs.size();
  }
  auto events = nlohmann::json::array();
  for (const auto& e : status.recent_events) {
    events.push_back({{"at_ms", e.at_ms}, {"pf", e.pf}, {"vf", e.vf}, {"message", e.message}});
  }
  return {{"version", status.version},
          {"config_file", status.config_file},
          {"config_generation", status.config_generation},
          {"state", to_string(status.state)},
          {"status", status.text},
          {"problems", texts(status.problems)},
          {"problem_details", details(status.problems)},
          {"ready_ms", status.ready_ms},
          {"steps", steps_json(overall_steps(status.pfs))},
          {"pf_count", status.pfs.size()},
          {"vf_count", vfs},
          {"recent_events", events},
          {"pfs", pfs}};
}

const PfStatus* find_pf(const DaemonStatus& status, const std::string& key) {
  for (const auto& pf : status.pfs) {
    if (pf.pci.str() == key || (!pf.name.empty() && pf.name == key)) {
      return &pf;
    }
    if (std::any_of(pf.vfs.begin(), pf.vfs.end(), [&](const VfStatus& vf) {
          return vf.pci.str() == key || (!vf.name.empty() && vf.name == key);
        })) {
      return &pf;
    }
  }
  return nullptr;
}

}  // namespace vfready::model
