// SPDX-License-Identifier: Apache-2.0
#include "topology.hpp"

#include <cerrno>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "vfready/model/if_name.hpp"
#include "vfready/model/json_reader.hpp"

namespace vfready::fakehost {

namespace {

using model::JsonReader;

std::string hex_id(const JsonReader& r) {
  auto s = r.string();
  if (s.size() != 6 || s.substr(0, 2) != "0x" ||
      s.find_first_not_of("0123456789abcdefABCDEF", 2) != std::string::npos) {
    r.fail("must be a PCI ID like \"0x1021\"");
  }
  return s;
}

PortSpec parse_port(const JsonReader& r) {
  r.only_keys({"link_layer", "state", "phys_state", "lid"});
  PortSpec p;
  if (r.has("link_layer")) {
    p.link_layer = r["link_layer"].string();
    if (p.link_layer != "InfiniBand" && p.link_layer != "Ethernet" && p.link_layer != "Unknown") {
      r["link_layer"].fail("must be InfiniBand, Ethernet or Unknown");
    }
  }
  if (r.has("state")) {
    p.state = r["state"].string();
  }
  if (r.has("phys_state")) {
    p.phys_state = r["phys_state"].string();
  }
  if (r.has("lid")) {
    p.lid = static_cast<uint32_t>(r["lid"].uint(0xffff));
  }
  return p;
}

InfinibandSpec parse_ib(const JsonReader& r) {
  r.only_keys({"name", "fw_ver", "node_guid", "ofed_sriov_sysfs", "ports"});
  InfinibandSpec ib;
  ib.name = r["name"].string();
  ib.fw_ver = r.has("fw_ver") ? r["fw_ver"].string() : "28.43.1014";
  if (r.has("node_guid")) {
    auto g = model::Guid::parse(r["node_guid"].string());
    if (!g) {
      r["node_guid"].fail(g.error().message);
    }
    ib.node_guid = g.value();
  }
  if (r.has("ofed_sriov_sysfs")) {
    ib.ofed_sriov_sysfs = r["ofed_sriov_sysfs"].boolean();
  }
  if (r.has("ports")) {
    for (std::size_t i = 0; i < r["ports"].array_size(); ++i) {
      ib.ports.push_back(parse_port(r["ports"][i]));
    }
  }
  if (ib.ports.empty()) {
    ib.ports.emplace_back();
  }
  return ib;
}

SriovSpec parse_sriov(const JsonReader& r) {
  r.only_keys({"totalvfs", "vf_device", "first_vf_offset", "vf_stride", "vf_probe_ms"});
  SriovSpec s;
  s.totalvfs = static_cast<uint16_t>(r["totalvfs"].uint(0xffff));
  s.vf_device = r.has("vf_device") ? hex_id(r["vf_device"]) : "0x101e";
  if (r.has("first_vf_offset")) {
    s.first_vf_offset = static_cast<uint16_t>(r["first_vf_offset"].uint(0xffff));
  }
  if (r.has("vf_stride")) {
    s.vf_stride = static_cast<uint16_t>(r["vf_stride"].uint(0xffff));
  }
  if (r.has("vf_probe_ms")) {
    s.vf_probe_ms = static_cast<uint32_t>(r["vf_probe_ms"].uint(600000));
  }
  return s;
}

FaultSpec parse_faults(const JsonReader& r) {
  r.only_keys({"probe_fail_vfs", "probe_hang_vfs", "netdev_gone_vfs", "guid_write_fail_vfs",
               "guid_write_hang_vfs", "port_read_fail_vfs", "port_read_hang_vfs",
               "numvfs_write_hangs", "numvfs_errno", "port_state_hangs", "port_state_errno"});
  FaultSpec f;
  for (const auto& [key, set] : {std::pair{"probe_fail_vfs", &f.probe_fail_vfs},
                                 std::pair{"probe_hang_vfs", &f.probe_hang_vfs},
                                 std::pair{"netdev_gone_vfs", &f.netdev_gone_vfs},
                                 std::pair{"guid_write_fail_vfs", &f.guid_write_fail_vfs},
                                 std::pair{"guid_write_hang_vfs", &f.guid_write_hang_vfs},
                                 std::pair{"port_read_fail_vfs", &f.port_read_fail_vfs},
                                 std::pair{"port_read_hang_vfs", &f.port_read_hang_vfs}}) {
    if (r.has(key)) {
      const auto list = r[key];
      for (std::size_t i = 0; i < list.array_size(); ++i) {
        set->insert(static_cast<uint16_t>(list[i].uint(0xffff)));
      }
    }
  }
  if (r.has("numvfs_write_hangs")) {
    f.numvfs_write_hangs = r["numvfs_write_hangs"].boolean();
  }
  if (r.has("port_state_hangs")) {
    f.port_state_hangs = r["port_state_hangs"].boolean();
  }
  for (const auto& [key, err] : {std::pair{"numvfs_errno", &f.numvfs_errno},
                                 std::pair{"port_state_errno", &f.port_state_errno}}) {
    if (!r.has(key)) {
      continue;
    }
    const auto name = r[key].string();
    auto e = errno_from_name(name);
    if (!e) {
      r[key].fail("unknown errno \"" + name +
                  "\" (valid: EIO, EBUSY, ENOENT, ENOMEM, EINVAL, ERANGE, ENODEV, "
                  "EPERM, ENOSPC, ETIMEDOUT)");
    }
    *err = *e;
  }
  return f;
}

FunctionSpec parse_function(const JsonReader& r) {
  r.only_keys({"pci", "vendor", "device", "driver", "numa_node", "netdev", "slot", "sriov",
               "infiniband", "faults"});
  auto pci = model::PciAddress::parse(r["pci"].string());
  if (!pci) {
    r["pci"].fail(pci.error().message);
  }
  FunctionSpec f{.pci = pci.value(),
                 .vendor = r.has("vendor") ? hex_id(r["vendor"]) : "0x15b3",
                 .device = hex_id(r["device"])};
  if (r.has("driver")) {
    f.driver = r["driver"].string();
  }
  if (r.has("numa_node")) {
    f.numa_node = static_cast<int>(r["numa_node"].integer());
  }
  if (r.has("netdev")) {
    f.netdev = r["netdev"].string();
    if (auto name = model::IfName::parse(*f.netdev); !name) {
      r["netdev"].fail(name.error().message);
    }
  }
  if (r.has("slot")) {
    f.slot = r["slot"].string();
    // udev's net_id takes slots numbered from 1 (pci_get_hotplug_slot() skips 0).
    if (f.slot->empty() || f.slot->find_first_not_of("0123456789") != std::string::npos ||
        f.slot->find_first_not_of('0') == std::string::npos) {
      r["slot"].fail("must be a slot number from 1, such as \"3\" (as /sys/bus/pci/slots/<slot>)");
    }
  }
  if (r.has("sriov")) {
    f.sriov = parse_sriov(r["sriov"]);
    for (uint16_t i = 0; i < f.sriov->totalvfs; ++i) {
      if (!f.vf_address(i)) {
        r["sriov"].fail("VF " + std::to_string(i) + " falls beyond bus ff");
      }
    }
  }
  if (r.has("infiniband")) {
    f.infiniband = parse_ib(r["infiniband"]);
  }
  if (r.has("faults")) {
    f.faults = parse_faults(r["faults"]);
  }
  return f;
}

Topology parse(const JsonReader& root) {
  root.only_keys({"name", "kernel", "modules", "kernel_log", "udev", "functions"});
  Topology t;
  t.name = root.has("name") ? root["name"].string() : "fakehost";
  t.kernel_release = "6.8.0-55-generic";
  if (root.has("kernel")) {
    root["kernel"].only_keys({"release", "serializes_sriov_configure"});
    if (root["kernel"].has("release")) {
      t.kernel_release = root["kernel"]["release"].string();
    }
    if (root["kernel"].has("serializes_sriov_configure")) {
      t.serializes_sriov_configure = root["kernel"]["serializes_sriov_configure"].boolean();
    }
  }
  if (root.has("modules")) {
    const auto modules = root["modules"];
    if (!modules.json().is_object()) {
      modules.fail("must be an object of module name to {\"version\": ...}");
    }
    for (const auto& [name, m] : modules.json().items()) {
      const JsonReader module(m, modules.path() + "." + name);
      module.only_keys({"version", "loads_on_signal"});
      if (module.has("loads_on_signal") && module["loads_on_signal"].boolean()) {
        t.late_modules.insert(name);
      }
      t.modules[name] = module.has("version")
                            ? std::optional<std::string>(module["version"].string())
                            : std::nullopt;
    }
  }
  if (root.has("kernel_log")) {
    const auto log = root["kernel_log"];
    for (std::size_t i = 0; i < log.array_size(); ++i) {
      t.kernel_log.push_back(log[i].string());
    }
  }
  if (root.has("udev")) {
    root["udev"].only_keys(
        {"init_latency_ms", "renaming_ms", "announces", "starts_on_signal", "name_policy"});
    if (root["udev"].has("name_policy")) {
      const auto policy = root["udev"]["name_policy"];
      const auto name = policy.string();
      if (name == "path") {
        t.udev_name_policy = NamePolicy::kPath;
      } else if (name == "slot") {
        t.udev_name_policy = NamePolicy::kSlot;
      } else if (name == "keep") {
        t.udev_name_policy = NamePolicy::kKeep;
      } else if (name == "none") {
        t.udev_name_policy = NamePolicy::kNone;
      } else {
        policy.fail("unknown name policy \"" + name + "\" (valid: path, slot, keep, none)");
      }
    }
    if (root["udev"].has("init_latency_ms")) {
      t.udev_init_latency_ms = static_cast<uint32_t>(root["udev"]["init_latency_ms"].uint(60000));
    }
    if (root["udev"].has("renaming_ms")) {
      t.udev_renaming_ms = static_cast<uint32_t>(root["udev"]["renaming_ms"].uint(60000));
    }
    if (root["udev"].has("announces")) {
      t.udev_announces = root["udev"]["announces"].boolean();
    }
    if (root["udev"].has("starts_on_signal")) {
      t.udev_starts_on_signal = root["udev"]["starts_on_signal"].boolean();
    }
  }
  const auto functions = root["functions"];
  std::set<model::PciAddress> seen;
  std::set<std::string> netdevs;
  for (std::size_t i = 0; i < functions.array_size(); ++i) {
    auto f = parse_function(functions[i]);
    if (!seen.insert(f.pci).second) {
      functions[i]["pci"].fail("PCI address " + f.pci.str() + " appears twice");
    }
    if (f.netdev && !netdevs.insert(*f.netdev).second) {
      functions[i]["netdev"].fail("netdev " + *f.netdev + " appears twice");
    }
    t.functions.push_back(std::move(f));
  }
  // VFs must not land on another function's address, nor on another PF's VF, nor past
  // the last routing ID of the bus.
  std::map<model::PciAddress, std::string> vfs;
  for (const auto& f : t.functions) {
    for (uint16_t i = 0; f.sriov && i < f.sriov->totalvfs; ++i) {
      const auto vf = f.vf_address(i);
      const auto who = "VF " + std::to_string(i) + " of " + f.pci.str();
      if (!vf) {
        functions.fail(who + " would be past the last routing ID (offset and stride too large)");
      }
      if (seen.contains(vf.value())) {
        functions.fail(who + " would be " + vf.value().str() + ", which is another function");
      }
      if (auto [it, inserted] = vfs.emplace(vf.value(), who); !inserted) {
        functions.fail(who + " would be " + vf.value().str() + ", which is also " + it->second);
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
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    return Error{source + ": not valid JSON: " + e.what()};
  }
  try {
    return parse(model::JsonReader(j, "$"));
  } catch (const model::JsonError& e) {
    return Error{source + ": " + e.path + ": " + e.what};
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
