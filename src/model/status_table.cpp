// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/status_table.hpp"

#include <cstdio>

namespace vfready::model {

namespace {

std::string str(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() && !it->get<std::string>().empty()
             ? it->get<std::string>()
             : "-";
}

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

std::string join(const nlohmann::json& list) {
  std::string out;
  for (const auto& s : list) {
    out += (out.empty() ? "" : ",") + s.get<std::string>();
  }
  return out.empty() ? "-" : out;
}

std::string ms(double v) { return std::to_string(static_cast<long>(v)) + " ms"; }

std::string vf_lines(const nlohmann::json& pf, bool colour) {
  std::string out;
  for (const auto& vf : pf.value("vfs", nlohmann::json::array())) {
    const bool ok = vf.value("problems", nlohmann::json::array()).empty();
    const bool in_use = !vf.value("in_use", std::string()).empty();
    const char* word = !ok ? "problem" : in_use ? "in use" : "ok";
    out += "  VF " + pad(std::to_string(vf.value("index", 0)), 3) + pad(str(vf, "pci"), 12) +
           pad(str(vf, "name"), 15) + pad(str(vf, "guid"), 23) +
           paint(word, ok ? "ready" : "problem", colour) + "  " +
           join(vf.value("altnames", nlohmann::json::array())) + "\n";
  }
  return out;
}

std::string problem_lines(const nlohmann::json& pf, bool colour) {
  std::string out;
  const auto line = [&](const std::string& who, const std::string& text) {
    out += paint("  problem", "problem", colour) + " [" + who + "] " + text + "\n";
  };
  for (const auto& p : pf.value("problems", nlohmann::json::array())) {
    line(str(pf, "pci"), p.get<std::string>());
  }
  for (const auto& vf : pf.value("vfs", nlohmann::json::array())) {
    for (const auto& p : vf.value("problems", nlohmann::json::array())) {
      line(str(vf, "pci"), p.get<std::string>());
    }
  }
  for (const auto& w : pf.value("warnings", nlohmann::json::array())) {
    out += paint("  warning", "degraded", colour) + " [" + str(pf, "pci") + "] " +
           w.get<std::string>() + "\n";
  }
  return out;
}

}  // namespace

std::string render_status(const nlohmann::json& status, bool colour) {
  const auto state = str(status, "state");
  std::string out = "State: " + paint(state, state, colour) + " (" + str(status, "status") + ")";
  if (status.value("ready_ms", -1.0) >= 0) {
    out += ", outcome after " + ms(status.value("ready_ms", 0.0));
  }
  out += "\n";
  for (const auto& p : status.value("problems", nlohmann::json::array())) {
    out += paint("problem", "problem", colour) + ": " + p.get<std::string>() + "\n";
  }
  out += pad("PF", 12) + pad("NAME", 15) + pad("STATE", 7) + pad("LINK", 10) + pad("PORT", 10) +
         "VFS\n";
  std::string details;
  for (const auto& pf : status.value("pfs", nlohmann::json::array())) {
    const auto vfs = pf.value("vfs", nlohmann::json::array());
    std::size_t good = 0;
    for (const auto& vf : vfs) {
      good += vf.value("problems", nlohmann::json::array()).empty() ? 1 : 0;
    }
    const auto pf_state = str(pf, "state");
    out += pad(str(pf, "pci"), 12) + pad(str(pf, "name"), 15) +
           paint(pad(pf_state, 7), pf_state, colour) + pad(str(pf, "link_layer"), 10) +
           pad(str(pf, "port_state"), 10) + std::to_string(good) + "/" +
           std::to_string(vfs.size()) + "\n";
    out += vf_lines(pf, colour);
    details += problem_lines(pf, colour);
  }
  return out + details;
}

std::string render_pf(const nlohmann::json& pf, bool colour) {
  const auto state = str(pf, "state");
  std::string out =
      "PF " + str(pf, "pci") + " (" + str(pf, "name") + "): " + paint(state, state, colour) + "\n";
  out += "  link layer " + str(pf, "link_layer") + ", port " + str(pf, "port_state") + "\n";
  out += "  steps:";
  for (const auto& s : pf.value("steps", nlohmann::json::array())) {
    out += " " + str(s, "name") + " " + paint(str(s, "state"), str(s, "state"), colour) + " " +
           ms(s.value("elapsed_ms", 0.0)) + ";";
  }
  out += "\n" + vf_lines(pf, colour) + problem_lines(pf, colour);
  return out;
}

}  // namespace vfready::model
