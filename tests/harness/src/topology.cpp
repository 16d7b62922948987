// SPDX-License-Identifier: Apache-2.0
#include "topology.hpp"

#include <cerrno>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "vfready/model/if_name.hpp"

namespace vfready::fakehost {

namespace {

using nlohmann::json;

// Thrown inside the parser only; parse_topology turns it into an Error.
struct Bad {
  std::string path;
  std::string what;
};

void only_keys(const json& j, const std::string& path, std::initializer_list<const char*> keys) {
  if (!j.is_object()) {
    throw Bad{path, "must be an object"};
  }
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (const char* k : keys) {
      known = known || key == k;
    }
    if (!known) {
      std::string valid;
      for (const char* k : keys) {
        valid += valid.empty() ? k : std::string(", ") + k;
      }
      throw Bad{path + "." + key, "unknown key (valid here: " + valid + ")"};
    }
  }
}

std::string str(const json& j, const std::string& path) {
  if (j.is_null()) {
    throw Bad{path, "is required"};
  }
  if (!j.is_string()) {
    throw Bad{path, "must be a string"};
  }
  return j.get<std::string>();
}

uint64_t uint(const json& j, const std::string& path, uint64_t max) {
  if (!j.is_number_unsigned() && !(j.is_number_integer() && j.get<int64_t>() >= 0)) {
    throw Bad{path, "must be a non-negative integer"};
  }
  const auto v = j.get<uint64_t>();
  if (v > max) {
    throw Bad{path, "must be at most " + std::to_string(max)};
  }
  return v;
}

std::string hex_id(const json& j, const std::string& path) {
  auto s = str(j, path);
  if (s.size() != 6 || s.substr(0, 2) != "0x" ||
      s.find_first_not_of("0123456789abcdefABCDEF", 2) != std::string::npos) {
    throw Bad{path, "must be a PCI ID like \"0x1021\""};
  }
  return s;
}

PortSpec parse_port(const json& j, const std::string& path) {
  only_keys(j, path, {"link_layer", "state", "phys_state", "lid"});
  PortSpec p;
  if (j.contains("link_layer")) {
    p.link_layer = str(j["link_layer"], path + ".link_layer");
    if (p.link_layer != "InfiniBand" && p.link_layer != "Ethernet" && p.link_layer != "Unknown") {
      throw Bad{path + ".link_layer", "must be InfiniBand, Ethernet or Unknown"};
    }
  }
  if (j.contains("state")) {
    p.state = str(j["state"], path + ".state");
  }
  if (j.contains("phys_state")) {
    p.phys_state = str(j["phys_state"], path + ".phys_state");
  }
  if (j.contains("lid")) {
    p.lid = static_cast<uint32_t>(uint(j["lid"], path + ".lid", 0xffff));
  }
  return p;
}

InfinibandSpec parse_ib(const json& j, const std::string& path) {
  only_keys(j, path, {"name", "fw_ver", "node_guid", "ofed_sriov_sysfs", "ports"});
  InfinibandSpec ib;
  ib.name = str(j.value("name", json()), path + ".name");
  ib.fw_ver = j.contains("fw_ver") ? str(j["fw_ver"], path + ".fw_ver") : "28.43.1014";
  if (j.contains("node_guid")) {
    auto g = model::Guid::parse(str(j["node_guid"], path + ".node_guid"));
    if (!g) {
      throw Bad{path + ".node_guid", g.error().message};
    }
    ib.node_guid = g.value();
  }
  if (j.contains("ofed_sriov_sysfs")) {
    if (!j["ofed_sriov_sysfs"].is_boolean()) {
      throw Bad{path + ".ofed_sriov_sysfs", "must be true or false"};
    }
    ib.ofed_sriov_sysfs = j["ofed_sriov_sysfs"].get<bool>();
  }
  if (j.contains("ports")) {
    if (!j["ports"].is_array()) {
      throw Bad{path + ".ports", "must be an array"};
    }
    for (std::size_t i = 0; i < j["ports"].size(); ++i) {
      ib.ports.push_back(parse_port(j["ports"][i], path + ".ports[" + std::to_string(i) + "]"));
    }
  }
  if (ib.ports.empty()) {
    ib.ports.emplace_back();
  }
  return ib;
}

SriovSpec parse_sriov(const json& j, const std::string& path) {
  only_keys(j, path, {"totalvfs", "vf_device", "first_vf_offset", "vf_stride", "vf_probe_ms"});
  SriovSpec s;
  s.totalvfs = static_cast<uint16_t>(uint(j.value("totalvfs", json()), path + ".totalvfs", 0xffff));
  s.vf_device = j.contains("vf_device") ? hex_id(j["vf_device"], path + ".vf_device") : "0x101e";
  if (j.contains("first_vf_offset")) {
    s.first_vf_offset =
        static_cast<uint16_t>(uint(j["first_vf_offset"], path + ".first_vf_offset", 0xffff));
  }
  if (j.contains("vf_stride")) {
    s.vf_stride = static_cast<uint16_t>(uint(j["vf_stride"], path + ".vf_stride", 0xffff));
  }
  if (j.contains("vf_probe_ms")) {
    s.vf_probe_ms = static_cast<uint32_t>(uint(j["vf_probe_ms"], path + ".vf_probe_ms", 600000));
  }
  return s;
}

FaultSpec parse_faults(const json& j, const std::string& path) {
  only_keys(j, path, {"probe_fail_vfs", "numvfs_write_hangs", "numvfs_errno"});
  FaultSpec f;
  if (j.contains("probe_fail_vfs")) {
    if (!j["probe_fail_vfs"].is_array()) {
      throw Bad{path + ".probe_fail_vfs", "must be an array of VF indices"};
    }
    for (std::size_t i = 0; i < j["probe_fail_vfs"].size(); ++i) {
      f.probe_fail_vfs.insert(static_cast<uint16_t>(uint(
          j["probe_fail_vfs"][i], path + ".probe_fail_vfs[" + std::to_string(i) + "]", 0xffff)));
    }
  }
  if (j.contains("numvfs_write_hangs")) {
    if (!j["numvfs_write_hangs"].is_boolean()) {
      throw Bad{path + ".numvfs_write_hangs", "must be true or false"};
    }
    f.numvfs_write_hangs = j["numvfs_write_hangs"].get<bool>();
  }
  if (j.contains("numvfs_errno")) {
    const auto name = str(j["numvfs_errno"], path + ".numvfs_errno");
    auto e = errno_from_name(name);
    if (!e) {
      throw Bad{path + ".numvfs_errno", "unknown errno \"" + name +
                                            "\" (valid: EIO, EBUSY, ENOENT, ENOMEM, EINVAL, "
                                            "ERANGE, ENODEV, EPERM, ENOSPC, ETIMEDOUT)"};
    }
    f.numvfs_errno = *e;
  }
  return f;
}

FunctionSpec parse_function(const json& j, const std::string& path) {
  only_keys(j, path,
            {"pci", "vendor", "device", "driver", "numa_node", "netdev", "sriov", "infiniband",
             "faults"});
  auto pci = model::PciAddress::parse(str(j.value("pci", json()), path + ".pci"));
  if (!pci) {
    throw Bad{path + ".pci", pci.error().message};
  }
  FunctionSpec f{.pci = pci.value(),
                 .vendor = j.contains("vendor") ? hex_id(j["vendor"], path + ".vendor") : "0x15b3",
                 .device = hex_id(j.value("device", json()), path + ".device")};
  if (j.contains("driver")) {
    f.driver = str(j["driver"], path + ".driver");
  }
  if (j.contains("numa_node")) {
    if (!j["numa_node"].is_number_integer()) {
      throw Bad{path + ".numa_node", "must be an integer (-1: none)"};
    }
    f.numa_node = j["numa_node"].get<int>();
  }
  if (j.contains("netdev")) {
    f.netdev = str(j["netdev"], path + ".netdev");
    if (auto name = model::IfName::parse(*f.netdev); !name) {
      throw Bad{path + ".netdev", name.error().message};
    }
  }
  if (j.contains("sriov")) {
    f.sriov = parse_sriov(j["sriov"], path + ".sriov");
    for (uint16_t i = 0; i < f.sriov->totalvfs; ++i) {
      if (!f.vf_address(i)) {
        throw Bad{path + ".sriov", "VF " + std::to_string(i) + " falls beyond bus ff"};
      }
    }
  }
  if (j.contains("infiniband")) {
    f.infiniband = parse_ib(j["infiniband"], path + ".infiniband");
  }
  if (j.contains("faults")) {
    f.faults = parse_faults(j["faults"], path + ".faults");
  }
  return f;
}

Topology parse(const json& j) {
  only_keys(j, "$", {"name", "kernel", "modules", "kernel_log", "udev", "functions"});
  Topology t;
  t.name = j.contains("name") ? str(j["name"], "$.name") : "fakehost";
  t.kernel_release = "6.8.0-55-generic";
  if (j.contains("kernel")) {
    only_keys(j["kernel"], "$.kernel", {"release"});
    if (j["kernel"].contains("release")) {
      t.kernel_release = str(j["kernel"]["release"], "$.kernel.release");
    }
  }
  if (j.contains("modules")) {
    if (!j["modules"].is_object()) {
      throw Bad{"$.modules", "must be an object of module name to {\"version\": ...}"};
    }
    for (const auto& [name, m] : j["modules"].items()) {
      const auto path = "$.modules." + name;
      only_keys(m, path, {"version"});
      t.modules[name] = m.contains("version")
                            ? std::optional<std::string>(str(m["version"], path + ".version"))
                            : std::nullopt;
    }
  }
  if (j.contains("kernel_log")) {
    if (!j["kernel_log"].is_array()) {
      throw Bad{"$.kernel_log", "must be an array of strings"};
    }
    for (std::size_t i = 0; i < j["kernel_log"].size(); ++i) {
      t.kernel_log.push_back(str(j["kernel_log"][i], "$.kernel_log[" + std::to_string(i) + "]"));
    }
  }
  if (j.contains("udev")) {
    only_keys(j["udev"], "$.udev", {"init_latency_ms"});
    if (j["udev"].contains("init_latency_ms")) {
      t.udev_init_latency_ms = static_cast<uint32_t>(
          uint(j["udev"]["init_latency_ms"], "$.udev.init_latency_ms", 60000));
    }
  }
  if (!j.contains("functions") || !j["functions"].is_array()) {
    throw Bad{"$.functions", "must be an array of PCI functions"};
  }
  std::set<model::PciAddress> seen;
  std::set<std::string> netdevs;
  for (std::size_t i = 0; i < j["functions"].size(); ++i) {
    const auto path = "$.functions[" + std::to_string(i) + "]";
    auto f = parse_function(j["functions"][i], path);
    if (!seen.insert(f.pci).second) {
      throw Bad{path + ".pci", "PCI address " + f.pci.str() + " appears twice"};
    }
    if (f.netdev && !netdevs.insert(*f.netdev).second) {
      throw Bad{path + ".netdev", "netdev " + *f.netdev + " appears twice"};
    }
    t.functions.push_back(std::move(f));
  }
  // VFs must not land on another function's address.
  for (const auto& f : t.functions) {
    if (!f.sriov) {
      continue;
    }
    for (uint16_t i = 0; i < f.sriov->totalvfs; ++i) {
      const auto vf = f.vf_address(i).value();
      if (seen.contains(vf)) {
        throw Bad{"$.functions", "VF " + std::to_string(i) + " of " + f.pci.str() + " would be " +
                                     vf.str() + ", which is another function"};
      }
    }
  }
  return t;
}

}  // namespace

Result<model::PciAddress> FunctionSpec::vf_address(uint16_t index) const {
  const uint32_t offset = sriov ? sriov->first_vf_offset + uint32_t{index} * sriov->vf_stride : 0;
  return model::PciAddress::from_routing_id(pci.domain(), pci.routing_id() + offset);
}

Result<Topology> parse_topology(const std::string& json_text, const std::string& source) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::parse_error& e) {
    return Error{source + ": not valid JSON: " + e.what()};
  }
  try {
    return parse(j);
  } catch (const Bad& bad) {
    return Error{source + ": " + bad.path + ": " + bad.what};
  } catch (const json::exception& e) {
    return Error{source + ": " + e.what()};
  }
}

Result<Topology> load_topology(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return Error{path + ": cannot open topology file"};
  }
  std::stringstream text;
  text << in.rdbuf();
  return parse_topology(text.str(), path);
}

std::optional<int> errno_from_name(const std::string& name) {
  static const std::pair<const char*, int> kNames[] = {
      {"EIO", EIO},       {"EBUSY", EBUSY},        {"ENOENT", ENOENT}, {"ENOMEM", ENOMEM},
      {"EINVAL", EINVAL}, {"ERANGE", ERANGE},      {"ENODEV", ENODEV}, {"EPERM", EPERM},
      {"ENOSPC", ENOSPC}, {"ETIMEDOUT", ETIMEDOUT}};
  for (const auto& [n, e] : kNames) {
    if (name == n) {
      return e;
    }
  }
  return std::nullopt;
}

}  // namespace vfready::fakehost
