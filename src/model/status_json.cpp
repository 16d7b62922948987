// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/status_json.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <optional>
#include <string_view>
#include <utility>

#include "vfready/model/json_writer.hpp"

namespace vfready::model {

namespace {

int64_t whole_ms(double ms) { return static_cast<int64_t>(ms); }

void write_step(JsonWriter& w, const StepTiming& s, int64_t started_unix_ms) {
  w.begin_object()
      .field("name", s.name)
      .field("state", to_string(s.state))
      .field("started_ms", whole_ms(s.started_ms))
      .field("elapsed_ms", whole_ms(s.elapsed_ms));
  if (started_unix_ms > 0) {
    w.field("started_at", rfc3339(started_unix_ms + whole_ms(s.started_ms)));
  }
  w.end_object();
}

void write_steps(JsonWriter& w, const std::vector<StepTiming>& steps, int64_t started_unix_ms) {
  w.begin_array();
  for (const auto& s : steps) {
    write_step(w, s, started_unix_ms);
  }
  w.end_array();
}

void write_id(JsonWriter& w, uint16_t v) {
  if (v == 0) {
    w.null();
    return;
  }
  char buf[8];
  static_cast<void>(std::snprintf(buf, sizeof buf, "%04x", static_cast<unsigned>(v)));
  w.value(std::string_view(buf));
}

void write_changes(JsonWriter& w, const PfChanges& c) {
  w.begin_object()
      .field("vfs_created", c.vfs_created)
      .field("guids_set", c.guids_set)
      .field("macs_set", c.macs_set)
      .field("vfs_rebound", c.vfs_rebound)
      .field("vfs_rebound_mac", c.vfs_rebound_mac)
      .field("links_renamed", c.links_renamed)
      .field("autoprobe_restored", c.autoprobe_restored)
      .key("summary")
      .text_or_null(describe(c))
      .end_object();
}

void write_texts(JsonWriter& w, const std::vector<Problem>& problems) {
  w.begin_array();
  for (const auto& p : problems) {
    w.value(p.text);
  }
  w.end_array();
}

// Each problem with its stable code, MESSAGE_ID and remedy.
void write_details(JsonWriter& w, const std::vector<Problem>& problems) {
  w.begin_array();
  for (const auto& p : problems) {
    w.begin_object()
        .field("code", p.code())
        .field("message_id", event_info(p.kind).message_id)
        .key("pf")
        .text_or_null(p.pf)
        .key("vf")
        .text_or_null(p.vf)
        .field("text", p.text)
        .field("remedy", p.remedy)
        .end_object();
  }
  w.end_array();
}

void write_events(JsonWriter& w, const std::vector<Problem>& problems) {
  for (const auto& p : problems) {
    w.begin_object().field("event", p.code()).field("message", p.text).end_object();
  }
}

// "4: ACTIVE" -> {4, "ACTIVE"}; nothing when it does not read so.
std::optional<std::pair<int, std::string_view>> port_state_parts(std::string_view text) {
  // sysfs: "<number>: <NAME>"
  const auto colon = text.find(": ");
  int value = 0;
  if (colon == std::string::npos || colon == 0) {
    return std::nullopt;
  }
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + colon, value);
  if (ec != std::errc() || ptr != text.data() + colon || colon + 2 >= text.size()) {
    return std::nullopt;
  }
  return std::pair{value, text.substr(colon + 2)};
}

// {"value": 4, "name": "ACTIVE"}, or null.
void write_port_state(JsonWriter& w, const std::string& text) {
  if (const auto port = port_state_parts(text)) {
    w.begin_object().field("value", port->first).field("name", port->second).end_object();
  } else {
    w.null();
  }
}

bool names(const nlohmann::json& j, const char* key, const std::string& value) {
  return !value.empty() && text_at(j, key) == value;
}

void write_vf(JsonWriter& w, const VfStatus& vf, const VfRdmaStatus* rdma) {
  w.begin_object()
      .field("index", static_cast<unsigned>(vf.index))
      .field("pci", vf.pci.text())
      .key("name")
      .text_or_null(vf.name)
      .key("altnames")
      .strings(vf.altnames)
      .key("guid");
  if (vf.guid) {
    w.value(vf.guid->text());
  } else {
    w.null();
  }
  w.key("mac");
  if (vf.mac) {
    w.value(vf.mac->str());
  } else {
    w.null();
  }
  if (rdma != nullptr) {  // only a VF that has one: most have none, and many VFs a node
    w.field("rdma_device", rdma->device);
    write_port_state(w.key("port_state"), rdma->port_state);
  }
  w.field("ifindex", vf.ifindex)
      .field("state", to_string(state_of(vf)))
      .key("in_use")
      .text_or_null(vf.in_use.text())
      .key("problems");
  write_texts(w, vf.problems);
  w.key("problem_details");
  write_details(w, vf.problems);
  w.end_object();
}

void write_pf(JsonWriter& w, const PfStatus& pf, int64_t started_unix_ms) {
  const auto& id = pf.identity;
  w.begin_object().field("pci", pf.pci.text()).key("name").text_or_null(pf.name);
  w.key("configured_name").text_or_null(id.configured_name);
  w.key("kernel_name").text_or_null(id.kernel_name);
  write_id(w.key("vendor"), id.vendor);
  write_id(w.key("device"), id.device);
  write_id(w.key("vf_device"), id.vf_device);
  w.field("vfs_configured", id.vfs_configured)
      .field("state", to_string(pf.state))
      .key("step")
      .text_or_null(pf.step)
      .key("link_layer")
      .text_or_null(pf.link_layer)
      .key("rdma_device")
      .text_or_null(pf.rdma_device);
  write_port_state(w.key("port_state"), pf.port_state);
  write_texts(w.key("problems"), pf.problems);
  write_details(w.key("problem_details"), pf.problems);
  write_texts(w.key("warnings"), pf.warnings);
  write_details(w.key("warning_details"), pf.warnings);
  // Every problem and warning of the PF and its VFs, by its code.
  w.key("events").begin_array();
  write_events(w, pf.problems);
  write_events(w, pf.warnings);
  for (const auto& vf : pf.vfs) {
    write_events(w, vf.problems);
  }
  w.end_array();
  write_steps(w.key("steps"), pf.steps, started_unix_ms);
  write_changes(w.key("changes"), pf.changes);
  w.field("elapsed_ms", whole_ms(pf.elapsed_ms)).key("vfs").begin_array();
  for (const auto& vf : pf.vfs) {
    const auto rdma = std::find_if(pf.vf_rdma.begin(), pf.vf_rdma.end(),
                                   [&](const VfRdmaStatus& r) { return r.index == vf.index; });
    write_vf(w, vf, rdma == pf.vf_rdma.end() ? nullptr : &*rdma);
  }
  w.end_array().end_object();
}

void write_status(JsonWriter& w, const DaemonStatus& status, int64_t now_unix_ms) {
  const auto at = [&](double since_start_ms) -> JsonWriter& {
    return status.started_unix_ms > 0
               ? w.value(rfc3339(status.started_unix_ms + whole_ms(since_start_ms)))
               : w.null();
  };
  const std::size_t vfs = vf_count(status);
  const bool outcome = status.ready_ms >= 0;
  w.begin_object()
      .field("schema_version", kStatusSchemaVersion)
      .field("version", status.version)
      .key("generated_at");
  if (now_unix_ms > 0) {
    w.value(rfc3339(now_unix_ms));
  } else {
    w.null();
  }
  w.key("started_at");
  at(0);
  w.field("config_file", status.config_file)
      .field("config_generation", status.config_generation)
      .field("state", to_string(status.state))
      .field("node_ready", status.node_ready)
      .field("status", status.text);
  write_texts(w.key("problems"), status.problems);
  write_details(w.key("problem_details"), status.problems);
  w.key("ready_ms");
  if (outcome) {
    w.value(whole_ms(status.ready_ms)).key("ready_at");
    at(status.ready_ms);
  } else {
    w.null().key("ready_at").null();
  }
  w.key("pass_ms");
  if (outcome && status.pass_ms >= 0) {
    w.value(whole_ms(status.pass_ms));
  } else {
    w.null();
  }
  write_steps(w.key("steps"), overall_steps(status.pfs), status.started_unix_ms);
  w.field("pf_count", status.pfs.size()).field("vf_count", vfs);
  w.field("drift_events", status.drift_events)
      .field("passes_started", status.passes_started)
      .field("passes_finished", status.passes_finished);
  write_changes(w.key("changes"), status.changes);
  w.key("recent_events").begin_array();
  for (const auto& e : status.recent_events) {
    w.begin_object().field("at_ms", whole_ms(e.at_ms)).key("at");
    at(e.at_ms);
    w.field("pf", e.pf).key("vf").text_or_null(e.vf).field("message", e.message).end_object();
  }
  w.end_array().key("pfs").begin_array();
  for (const auto& pf : status.pfs) {
    write_pf(w, pf, status.started_unix_ms);
  }
  w.end_array().end_object();
}

}  // namespace

std::string json_text(const PfStatus& pf, int64_t started_unix_ms) {
  std::string out;
  JsonWriter w(out);
  write_pf(w, pf, started_unix_ms);
  return out;
}

std::string json_text(const DaemonStatus& status, int64_t now_unix_ms) {
  std::string out;
  // Some 200 bytes a VF (names longer than a DGX's make more) and 2 KiB a PF: written
  // without growing the text as it goes, nor for the file's newline.
  out.reserve(4096 + (status.pfs.size() * 2048) + (std::size_t{vf_count(status)} * 256));
  JsonWriter w(out);
  write_status(w, status, now_unix_ms);
  return out;
}

nlohmann::json to_json(const PfStatus& pf, int64_t started_unix_ms) {
  return nlohmann::json::parse(json_text(pf, started_unix_ms));
}

nlohmann::json to_json(const DaemonStatus& status, int64_t now_unix_ms) {
  return nlohmann::json::parse(json_text(status, now_unix_ms));
}

std::string text_at(const nlohmann::json& j, const char* key, const std::string& otherwise) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() && !it->get_ref<const std::string&>().empty()
             ? it->get<std::string>()
             : otherwise;
}

bool flag_at(const nlohmann::json& j, const char* key, bool otherwise) {
  const auto it = j.find(key);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : otherwise;
}

std::string status_file_text(const DaemonStatus& status, int64_t now_unix_ms) {
  auto out = json_text(status, now_unix_ms);
  out += '\n';
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
  const auto port = port_state_parts(text);
  return port ? nlohmann::json{{"value", port->first}, {"name", port->second}}
              : nlohmann::json(nullptr);
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
