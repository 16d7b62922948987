// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/status_table.hpp"

#include <cstdio>

#include "vfready/model/printable.hpp"
#include "vfready/model/status_json.hpp"

namespace vfready::model {

namespace {

// `j` with every string in it printable: a status file (or a bus answer) may hold any
// bytes, and an escape sequence in one must not reach the terminal as one.
nlohmann::json printable_strings(nlohmann::json j) {
  if (j.is_string()) {
    return printable(j.get<std::string>());
  }
  if (j.is_structured()) {  // (a number or bool iterates as itself)
    for (auto& item : j) {
      item = printable_strings(std::move(item));
    }
  }
  return j;
}

std::string str(const nlohmann::json& j, const char* key) { return text_at(j, key, "-"); }

std::string pad(const std::string& s, std::size_t width) {
  return s.size() >= width ? s + " " : s + std::string(width - s.size() + 1, ' ');
}

std::string paint(const std::string& text, const std::string& state, bool colour) {
  if (!colour) {
    return text;
  }
  const char* code = state == "ready" || state == "done"                           ? "32"
                     : state == "failed" || state == "problem" || state == "stuck" ? "31"
                     : state == "degraded"                                         ? "33"
                                                                                   : "0";
  return std::string("\033[") + code + "m" + text + "\033[0m";
}

// An item of a list the status gives as strings (problems, warnings, altnames): its text,
// or, for anything else a hand-edited or damaged status file holds there, its JSON.
std::string item_text(const nlohmann::json& item) {
  return item.is_string() ? item.get<std::string>() : item.dump();
}

std::string join(const nlohmann::json& list) {
  std::string out;
  for (const auto& s : list) {
    out += (out.empty() ? "" : ",") + item_text(s);
  }
  return out.empty() ? "-" : out;
}

std::string ms(double v) { return std::to_string(static_cast<long>(v)) + " ms"; }

// {"value": 4, "name": "ACTIVE"} -> "ACTIVE"
std::string port(const nlohmann::json& pf) {
  const auto it = pf.find("port_state");
  return it != pf.end() && it->is_object() ? str(*it, "name") : "-";
}

// "  RDMA rxe1 DOWN": an Ethernet VF's RDMA device and its port's state; "" when none.
std::string rdma(const nlohmann::json& vf) {
  const auto device = str(vf, "rdma_device");
  return device == "-" ? "" : "  RDMA " + device + " " + port(vf);
}

std::size_t count(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_array() ? it->size() : 0;
}

nlohmann::json list(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : nlohmann::json::array();
}

// VFs ready (no problem, not in use) and VFs configured (those there when the status
// does not say): "0/8" for a PF that failed before it made its VFs.
std::pair<std::size_t, std::size_t> vf_counts(const nlohmann::json& pf) {
  std::size_t good = 0;
  const auto vfs = list(pf, "vfs");
  for (const auto& vf : vfs) {
    good += str(vf, "state") == "ready" ? 1 : 0;
  }
  const auto configured = pf.find("vfs_configured");
  return {good, configured != pf.end() && configured->is_number_unsigned()
                    ? configured->get<std::size_t>()
                    : vfs.size()};
}

// "ibs0v0..ibs0v7": the first and last VF names, "-" when none has one.
std::string vf_names(const nlohmann::json& pf) {
  std::string first;
  std::string last;
  for (const auto& vf : list(pf, "vfs")) {
    const auto name = str(vf, "name");
    if (name != "-") {
      (first.empty() ? first : last) = name;
    }
  }
  return first.empty() ? "-" : last.empty() ? first : first + ".." + last;
}

std::size_t problem_count(const nlohmann::json& pf) {
  std::size_t n = count(pf, "problems");
  for (const auto& vf : list(pf, "vfs")) {
    n += count(vf, "problems");
  }
  return n;
}

std::string vf_lines(const nlohmann::json& pf, bool colour) {
  std::string out;
  for (const auto& vf : list(pf, "vfs")) {
    const bool ok = count(vf, "problems") == 0;
    const bool in_use = str(vf, "in_use") != "-";
    const char* word = !ok                               ? "problem"
                       : in_use                          ? "in use"
                       : str(vf, "state") == "unchecked" ? "unchecked"
                                                         : "ok";
    out += "  VF " + pad(std::to_string(number_at(vf, "index", 0)), 3) + pad(str(vf, "pci"), 12) +
           pad(str(vf, "name"), 15) +
           pad(str(vf, "guid") == "-" ? str(vf, "mac") : str(vf, "guid"), 23) +
           paint(word, ok ? "ready" : "problem", colour) + "  " + join(list(vf, "altnames")) +
           rdma(vf) + "\n";
  }
  return out;
}

std::string problem_lines(const nlohmann::json& pf, bool colour) {
  std::string out;
  const auto line = [&](const std::string& who, const std::string& text) {
    out += paint("  problem", "problem", colour) + " [" + who + "] " + text + "\n";
  };
  for (const auto& p : list(pf, "problems")) {
    line(str(pf, "pci"), item_text(p));
  }
  for (const auto& vf : list(pf, "vfs")) {
    for (const auto& p : list(vf, "problems")) {
      line(str(vf, "pci"), item_text(p));
    }
  }
  for (const auto& w : list(pf, "warnings")) {
    out +=
        paint("  warning", "degraded", colour) + " [" + str(pf, "pci") + "] " + item_text(w) + "\n";
  }
  return out;
}

// render_status() of a status whose strings are printable.
std::string render_printable_status(const nlohmann::json& status, bool colour, bool vfs) {
  const auto state = str(status, "state");
  std::string out = "State: " + paint(state, state, colour) + " (" + str(status, "status") + ")";
  // While a pass runs, the duration and the changes on record are the last pass's: not
  // shown as this one's.
  const bool outcome = state != "starting" && state != "configuring";
  const auto pass_ms = status.find("pass_ms");
  if (outcome && pass_ms != status.end() && pass_ms->is_number()) {
    out += ", outcome after " + ms(pass_ms->get<double>());
  }
  out += "\n";
  if (const auto changes = status.find("changes");
      outcome && changes != status.end() && changes->is_object()) {
    // Nothing changed is "needed" only where the pass found everything right.
    out += "Changed: " +
           text_at(*changes, "summary", state == "ready" ? "nothing needed changing" : "nothing") +
           "\n";
  }
  for (const auto& p : list(status, "problems")) {
    out += paint("problem", "problem", colour) + ": " + item_text(p) + "\n";
  }
  out += pad("PF", 12) + pad("NAME", 15) + pad("STATE", 7) + pad("LINK", 10) + pad("PORT", 10) +
         pad("VFS", 7) + pad("VF NAMES", 19) + "PROBLEMS\n";
  std::string details;
  for (const auto& pf : list(status, "pfs")) {
    const auto [good, there] = vf_counts(pf);
    const auto pf_state = str(pf, "state");
    out += pad(str(pf, "pci"), 12) + pad(str(pf, "name"), 15) +
           paint(pad(pf_state, 7), pf_state, colour) + pad(str(pf, "link_layer"), 10) +
           pad(port(pf), 10) + pad(std::to_string(good) + "/" + std::to_string(there), 7) +
           pad(vf_names(pf), 19) + std::to_string(problem_count(pf)) + "\n";
    if (vfs) {
      out += vf_lines(pf, colour);
    }
    details += problem_lines(pf, colour);
  }
  return out + details;
}

// render_pf() of a PF whose strings are printable.
std::string render_printable_pf(const nlohmann::json& pf, bool colour) {
  const auto state = str(pf, "state");
  std::string out =
      "PF " + str(pf, "pci") + " (" + str(pf, "name") + "): " + paint(state, state, colour) + "\n";
  out += "  link layer " + str(pf, "link_layer") + ", port " + port(pf) + "\n";
  out += "  steps:";
  for (const auto& s : list(pf, "steps")) {
    out += " " + str(s, "name") + " " + paint(str(s, "state"), str(s, "state"), colour) + " " +
           ms(number_at(s, "elapsed_ms", 0.0)) + ";";
  }
  out += "\n" + vf_lines(pf, colour) + problem_lines(pf, colour);
  return out;
}

}  // namespace

std::string render_status(const nlohmann::json& status, bool colour, bool vfs) {
  return render_printable_status(printable_strings(status), colour, vfs);
}

std::string render_pf(const nlohmann::json& pf, bool colour) {
  return render_printable_pf(printable_strings(pf), colour);
}

}  // namespace vfready::model
