// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/status_json.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ctime>

namespace vfready::model {

namespace {

// Text that may be unknown: null rather than "".
nlohmann::json text_or_null(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

int64_t whole_ms(double ms) { return static_cast<int64_t>(ms); }

nlohmann::json to_json(const StepTiming& s, int64_t started_unix_ms) {
  nlohmann::json j = {{"name", s.name},
                      {"state", to_string(s.state)},
                      {"started_ms", whole_ms(s.started_ms)},
                      {"elapsed_ms", whole_ms(s.elapsed_ms)}};
  if (started_unix_ms > 0) {
    j["started_at"] = rfc3339(started_unix_ms + whole_ms(s.started_ms));
  }
  return j;
}

nlohmann::json steps_json(const std::vector<StepTiming>& steps, int64_t started_unix_ms) {
  auto out = nlohmann::json::array();
  for (const auto& s : steps) {
    out.push_back(to_json(s, started_unix_ms));
  }
  return out;
}

std::string hex4(uint16_t v) {
  char buf[8];
  static_cast<void>(std::snprintf(buf, sizeof buf, "%04x", static_cast<unsigned>(v)));
  return buf;
}

nlohmann::json id_or_null(uint16_t v) {
  return v == 0 ? nlohmann::json(nullptr) : nlohmann::json(hex4(v));
}

nlohmann::json to_json(const PfChanges& c) {
  return {{"vfs_created", c.vfs_created},
          {"guids_set", c.guids_set},
          {"vfs_rebound", c.vfs_rebound},
          {"links_renamed", c.links_renamed},
          {"autoprobe_restored", c.autoprobe_restored},
          {"summary", text_or_null(describe(c))}};
}

bool names(const nlohmann::json& j, const char* key, const std::string& value) {
  return !value.empty() && text_at(j, key) == value;
}

// Each problem with its stable code, MESSAGE_ID and remedy.
nlohmann::json details(const std::vector<Problem>& problems) {
  auto out = nlohmann::json::array();
  for (const auto& p : problems) {
    out.push_back({{"code", p.code()},
                   {"message_id", event_info(p.kind).message_id},
                   {"pf", text_or_null(p.pf)},
                   {"vf", text_or_null(p.vf)},
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
          {"name", text_or_null(vf.name)},
          {"altnames", vf.altnames},
          {"guid", text_or_null(vf.guid)},
          {"ifindex", vf.ifindex},
          {"state", to_string(state_of(vf))},
          {"in_use", text_or_null(vf.in_use)},
          {"problems", texts(vf.problems)},
          {"problem_details", details(vf.problems)}};
}

nlohmann::json to_json(const PfStatus& pf, int64_t started_unix_ms) {
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
  const auto& id = pf.identity;
  return {{"pci", pf.pci.str()},
          {"name", text_or_null(pf.name)},
          {"configured_name", text_or_null(id.configured_name)},
          {"kernel_name", text_or_null(id.kernel_name)},
          {"vendor", id_or_null(id.vendor)},
          {"device", id_or_null(id.device)},
          {"vf_device", id_or_null(id.vf_device)},
          {"vfs_configured", id.vfs_configured},
          {"state", to_string(pf.state)},
          {"step", text_or_null(pf.step)},
          {"link_layer", text_or_null(pf.link_layer)},
          {"port_state", port_state_json(pf.port_state)},
          {"problems", texts(pf.problems)},
          {"problem_details", details(pf.problems)},
          {"warnings", texts(pf.warnings)},
          {"warning_details", details(pf.warnings)},
          {"events", events},
          {"steps", steps_json(pf.steps, started_unix_ms)},
          {"changes", to_json(pf.changes)},
          {"elapsed_ms", whole_ms(pf.elapsed_ms)},
          {"vfs", vfs}};
}

namespace {

// The daemon's status; without its `pfs` array when `with_pfs` is false (the status file
// writes them one by one), the counts and steps over the PFs included either way.
nlohmann::json status_json(const DaemonStatus& status, int64_t now_unix_ms, bool with_pfs) {
  const auto at = [&](double since_start_ms) {
    return status.started_unix_ms > 0
               ? nlohmann::json(rfc3339(status.started_unix_ms + whole_ms(since_start_ms)))
               : nlohmann::json(nullptr);
  };
  auto pfs = nlohmann::json::array();
  std::size_t vfs = 0;
  for (const auto& pf : status.pfs) {
    if (with_pfs) {
      pfs.push_back(to_json(pf, status.started_unix_ms));
    }
    vfs += pf.vfs.size();
  }
  auto events = nlohmann::json::array();
  for (const auto& e : status.recent_events) {
    events.push_back({{"at_ms", whole_ms(e.at_ms)},
                      {"at", at(e.at_ms)},
                      {"pf", e.pf},
                      {"vf", text_or_null(e.vf)},
                      {"message", e.message}});
  }
  const bool outcome = status.ready_ms >= 0;
  nlohmann::json out = {
      {"schema_version", kStatusSchemaVersion},
      {"version", status.version},
      {"generated_at",
       now_unix_ms > 0 ? nlohmann::json(rfc3339(now_unix_ms)) : nlohmann::json(nullptr)},
      {"started_at", at(0)},
      {"config_file", status.config_file},
      {"config_generation", status.config_generation},
      {"state", to_string(status.state)},
      {"node_ready", status.node_ready},
      {"status", status.text},
      {"problems", texts(status.problems)},
      {"problem_details", details(status.problems)},
      {"ready_ms", outcome ? nlohmann::json(whole_ms(status.ready_ms)) : nlohmann::json(nullptr)},
      {"ready_at", outcome ? at(status.ready_ms) : nlohmann::json(nullptr)},
      {"steps", steps_json(overall_steps(status.pfs), status.started_unix_ms)},
      {"pf_count", status.pfs.size()},
      {"vf_count", vfs},
      {"drift_events", status.drift_events},
      {"changes", to_json(status.changes)},
      {"recent_events", events}};
  if (with_pfs) {
    out["pfs"] = std::move(pfs);
  }
  return out;
}

}  // namespace

nlohmann::json to_json(const DaemonStatus& status, int64_t now_unix_ms) {
  return status_json(status, now_unix_ms, /*with_pfs=*/true);
}

std::string text_at(const nlohmann::json& j, const char* key, const std::string& otherwise) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() && !it->get_ref<const std::string&>().empty()
             ? it->get<std::string>()
             : otherwise;
}

std::string status_file_text(const DaemonStatus& status, int64_t now_unix_ms) {
  // Everything but the PFs, which are serialized one by one into the text: the whole
  // tree of 2,000 VFs at once was megabytes of peak RSS.
  const auto j = status_json(status, now_unix_ms, /*with_pfs=*/false);
  std::string out = j.dump();
  out.pop_back();  // the closing brace: the PFs go in before it
  out += ",\"pfs\":[";
  for (std::size_t i = 0; i < status.pfs.size(); ++i) {
    out += (i == 0 ? "" : ",") + to_json(status.pfs[i], status.started_unix_ms).dump();
  }
  out += "]}\n";
  return out;
}

std::string rfc3339(int64_t unix_ms) {
  const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[96];
  static_cast<void>(std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                                  tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                                  tm.tm_min, tm.tm_sec, static_cast<int>(unix_ms % 1000)));
  return buf;
}

nlohmann::json port_state_json(const std::string& text) {
  // sysfs: "<number>: <NAME>"
  const auto colon = text.find(": ");
  int value = 0;
  if (colon == std::string::npos || colon == 0) {
    return nullptr;
  }
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + colon, value);
  if (ec != std::errc() || ptr != text.data() + colon || colon + 2 >= text.size()) {
    return nullptr;
  }
  return {{"value", value}, {"name", text.substr(colon + 2)}};
}

const PfStatus* find_pf(const DaemonStatus& status, const std::string& key) {
  const auto is = [&](const std::string& name) { return !name.empty() && name == key; };
  for (const auto& pf : status.pfs) {
    if (pf.pci.str() == key || is(pf.name) || is(pf.identity.configured_name) ||
        is(pf.identity.kernel_name)) {
      return &pf;
    }
  }
  for (const auto& pf : status.pfs) {
    if (std::any_of(pf.vfs.begin(), pf.vfs.end(),
                    [&](const VfStatus& vf) { return vf.pci.str() == key || is(vf.name); })) {
      return &pf;
    }
  }
  return nullptr;
}

const nlohmann::json* find_pf(const nlohmann::json& status, const std::string& key) {
  const auto pfs = status.find("pfs");
  if (pfs == status.end() || !pfs->is_array()) {
    return nullptr;
  }
  for (const auto& pf : *pfs) {
    for (const char* k : {"pci", "name", "configured_name", "kernel_name"}) {
      if (names(pf, k, key)) {
        return &pf;
      }
    }
  }
  for (const auto& pf : *pfs) {
    const auto vfs = pf.find("vfs");
    if (vfs != pf.end() && vfs->is_array() &&
        std::any_of(vfs->begin(), vfs->end(), [&](const nlohmann::json& vf) {
          return names(vf, "pci", key) || names(vf, "name", key);
        })) {
      return &pf;
    }
  }
  return nullptr;
}

}  // namespace vfready::model
