// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/config.hpp"

#include <algorithm>
#include <set>

#include "ethernet_config.hpp"
#include "publish_paths.hpp"
#include "text.hpp"
#include "vfready/model/guid_scheme.hpp"
#include "vfready/model/json_document.hpp"
#include "vfready/model/json_reader.hpp"

namespace vfready::model {

namespace {

using nlohmann::json;

LinkLayer link_layer(const JsonReader& r) {
  return r.one_of({"InfiniBand", "Ethernet"}) == "InfiniBand" ? LinkLayer::kInfiniBand
                                                              : LinkLayer::kEthernet;
}

// An MTU the kernel takes on the link layer's netdevs. IPoIB (mlx5's enhanced IPoIB runs
// in datagram mode only): ipoib_change_mtu() refuses less than 72 and more than
// IPOIB_UD_MTU(4096) = 4092 with EINVAL; Ethernet: 68 to mlx5's 9978 (MLX5E_HW2SW_MTU of
// the largest port MTU), here the larger 65520 the kernel's own bound allows.
uint32_t mtu(const JsonReader& r, LinkLayer layer) {
  if (layer == LinkLayer::kInfiniBand) {
    const auto v = r.uint_in(68, 65520);
    if (v < 72 || v > 4092) {
      r.fail("is " + std::to_string(v) +
             "; an IPoIB netdev (link_layer InfiniBand) takes 72 to 4092: the kernel's "
             "ipoib_change_mtu() refuses more than 4092 (datagram mode at the 4K IB MTU)");
    }
    return static_cast<uint32_t>(v);
  }
  return static_cast<uint32_t>(r.uint_in(68, 65520));
}

uint16_t pci_id(const JsonReader& r) {
  const auto s = r.string();
  auto v = s.size() == 6 && s.starts_with("0x") ? text::parse_uint(s.substr(2), 16, 0xffff)
                                                : std::nullopt;
  if (!v) {
    r.fail("is \"" + s + "\"; must be a PCI device ID like \"0x1021\"");
  }
  return static_cast<uint16_t>(*v);
}

Guid guid(const JsonReader& r) {
  auto g = Guid::parse(r.string());
  if (!g) {
    r.fail(g.error().message);
  }
  if (!g->is_assignable()) {
    r.fail("GUID " + g->str() + " cannot be assigned (zero and all-ones are reserved)");
  }
  return g.value();
}

NameTemplate name_template(const JsonReader& r) {
  auto t = NameTemplate::parse(r.nonempty_string());
  if (!t) {
    r.fail(t.error().message);
  }
  return std::move(t).value();
}

std::vector<NameTemplate> templates(const JsonReader& r) {
  std::vector<NameTemplate> out;
  for (std::size_t i = 0; i < r.array_size(); ++i) {
    out.push_back(name_template(r[i]));
  }
  return out;
}

void no_vf_fields(const JsonReader& r, const NameTemplate& t) {
  for (const char* field : {"vf", "vf_pci"}) {
    if (t.uses(field)) {
      r.fail("template \"" + t.text() + "\" uses {" + field + "}, which a PF name does not have");
    }
  }
}

PfSelector selector(const JsonReader& r) {
  r.only_keys({"pci", "device", "link_layer"});
  PfSelector s;
  if (r.has("pci")) {
    const auto parse = [&](const JsonReader& item) {
      auto pci = PciAddress::parse(item.string());
      if (!pci) {
        item.fail(pci.error().message);
      }
      s.pci.push_back(pci.value());
    };
    const auto list = r["pci"];
    if (list.json().is_array()) {
      for (std::size_t i = 0; i < list.array_size(); ++i) {
        parse(list[i]);
      }
      if (s.pci.empty()) {
        list.fail("must list at least one PCI address");
      }
    } else {
      parse(list);
    }
    if (r.has("device") || r.has("link_layer")) {
      r.fail("select by \"pci\" alone, or by \"device\" (and \"link_layer\"), not both");
    }
    return s;
  }
  if (!r.has("device")) {
    r.fail("must have \"pci\" (one PF) or \"device\" (every PF with that PCI device ID)");
  }
  s.device = pci_id(r["device"]);
  if (r.has("link_layer")) {
    s.link_layer = link_layer(r["link_layer"]);
  }
  return s;
}

GuidConfig guid_config(const JsonReader& r, const PfConfig& pf) {
  r.only_keys({"scheme", "first", "last", "guids", "policy"});
  GuidConfig g;
  const auto scheme = r.has("scheme") ? r["scheme"].one_of({"derived", "pool", "explicit"})
                                      : std::string("derived");
  if (r.has("policy")) {
    const auto policy = r["policy"].one_of({"Follow", "Up", "Down"});
    g.policy = policy == "Up"     ? GuidPolicy::kUp
               : policy == "Down" ? GuidPolicy::kDown
                                  : GuidPolicy::kFollow;
  }
  if (scheme == "derived") {
    g.scheme = GuidScheme::kDerived;
    if (pf.vfs > kDerivedMaxVfIndex + 1) {
      r.fail("the derived scheme encodes VF indices up to " + std::to_string(kDerivedMaxVfIndex) +
             "; use \"pool\" for more than 256 VFs");
    }
    for (const char* k : {"first", "last", "guids"}) {
      if (r.has(k)) {
        r[k].fail("applies to another scheme, not \"derived\"");
      }
    }
  } else if (scheme == "pool") {
    g.scheme = GuidScheme::kPool;
    g.pool_first = guid(r["first"]);
    g.pool_last = guid(r["last"]);
    if (g.pool_last < g.pool_first) {
      r["last"].fail("is below \"first\"");
    }
  } else {
    g.scheme = GuidScheme::kExplicit;
    if (pf.select.pci.size() != 1) {
      r.fail("explicit GUIDs need exactly one PF, selected by \"pci\"");
    }
    const auto list = r["guids"];
    if (list.array_size() != pf.vfs) {
      list.fail("has " + std::to_string(list.array_size()) + " GUIDs for " +
                std::to_string(pf.vfs) + " VFs: give one per VF");
    }
    for (std::size_t i = 0; i < list.array_size(); ++i) {
      g.guids.push_back(guid(list[i]));
    }
  }
  return g;
}

PfConfig pf_config(const JsonReader& r, const std::string& source) {
  r.only_keys({"select", "vfs", "link_layer", "pf_mtu", "mtu", "pf_name", "vf_name", "pf_altnames",
               "vf_altnames", "guid", "mac", "vlan", "qos", "trust", "spoofchk", "link_state",
               "require_port_active", "optional"});
  PfConfig pf;
  pf.source = source;
  pf.json_path = r.path();
  pf.select = selector(r["select"]);
  pf.vfs = static_cast<uint16_t>(r["vfs"].uint(4096));
  if (r.has("link_layer")) {
    pf.link_layer = link_layer(r["link_layer"]);
  }
  // The link layer the PF's ports have when it comes up: what it is selected by, else
  // what it must be.
  const auto layer = pf.select.link_layer.value_or(pf.link_layer);
  if (r.has("pf_mtu")) {
    pf.pf_mtu = mtu(r["pf_mtu"], layer);
  }
  if (r.has("mtu")) {
    pf.vf_mtu = mtu(r["mtu"], layer);
  }
  if (r.has("pf_name")) {
    pf.pf_name = name_template(r["pf_name"]);
    no_vf_fields(r["pf_name"], *pf.pf_name);
    if (pf.pf_name->uses("pf_name")) {
      r["pf_name"].fail("template \"" + pf.pf_name->text() +
                        "\" uses {pf_name}, the name it makes: use {pf_kernel_name} for the "
                        "kernel's name");
    }
  }
  if (r.has("vf_name")) {
    pf.vf_name = name_template(r["vf_name"]);
    if (pf.vfs > 1 && !pf.vf_name->uses("vf") && !pf.vf_name->uses("vf_pci")) {
      r["vf_name"].fail("template \"" + pf.vf_name->text() +
                        "\" would give every VF the same name: use {vf} or {vf_pci}");
    }
  }
  if (r.has("pf_altnames")) {
    pf.pf_altnames = templates(r["pf_altnames"]);
    for (std::size_t i = 0; i < pf.pf_altnames.size(); ++i) {
      no_vf_fields(r["pf_altnames"][i], pf.pf_altnames[i]);
    }
  }
  if (r.has("vf_altnames")) {
    pf.vf_altnames = templates(r["vf_altnames"]);
  }
  if (r.has("require_port_active")) {
    pf.require_port_active = r["require_port_active"].boolean();
  }
  if (r.has("optional")) {
    pf.optional = r["optional"].boolean();
  }
  if (pf.link_layer == LinkLayer::kEthernet) {
    if (r.has("guid")) {
      r["guid"].fail("applies to InfiniBand VFs; this entry's link_layer is Ethernet");
    }
    pf.mac = r.has("mac") ? mac_config(r["mac"], pf) : MacConfig{};
    pf.vf_port = vf_port_config(r);
    return pf;
  }
  for (const char* key : {"mac", "vlan", "qos", "trust", "spoofchk", "link_state"}) {
    if (r.has(key)) {
      r[key].fail("applies to Ethernet VFs; this entry's link_layer is InfiniBand");
    }
  }
  pf.guid = r.has("guid") ? guid_config(r["guid"], pf) : GuidConfig{};
  if (!r.has("guid") && pf.vfs > kDerivedMaxVfIndex + 1) {
    r["vfs"].fail("is more than the derived GUID scheme's 256 VFs: configure a \"pool\"");
  }
  return pf;
}

// `pfs_source`: the file the "pfs" array came from (a drop-in replaces it whole).
Config config_from(const json& merged, const std::string& pfs_source) {
  Config c;
  const JsonReader root(merged, "$");
  root.only_keys({"$schema", "pfs", "timeouts", "outcome", "publish", "required_modules",
                  "firmware_minimums"});
  const auto pfs = root["pfs"];
  for (std::size_t i = 0; i < pfs.array_size(); ++i) {
    c.pfs.push_back(pf_config(pfs[i], pfs_source));
  }
  if (root.has("timeouts")) {
    const auto t = root["timeouts"];
    t.only_keys(
        {"numvfs_ms", "bind_ms", "udev_ms", "port_active_ms", "device_call_ms", "modules_ms"});
    const auto ms = [&](const char* key, uint32_t* out) {
      if (t.has(key)) {
        *out = static_cast<uint32_t>(t[key].uint_in(1, 3600000));
      }
    };
    ms("numvfs_ms", &c.timeouts.numvfs_ms);
    ms("bind_ms", &c.timeouts.bind_ms);
    ms("udev_ms", &c.timeouts.udev_ms);
    ms("port_active_ms", &c.timeouts.port_active_ms);
    ms("device_call_ms", &c.timeouts.device_call_ms);
    if (t.has("modules_ms")) {
      c.timeouts.modules_ms = static_cast<uint32_t>(t["modules_ms"].uint_in(0, 3600000));
    }
  }
  if (root.has("publish")) {
    const auto p = root["publish"];
    p.only_keys({"status_file", "nfd_file", "metrics_file"});
    const auto file = [&](const char* key, std::optional<std::string>* out) {
      if (!p.has(key)) {
        return;
      }
      // false, not null: in a drop-in (a JSON merge patch) null removes the key instead.
      const auto v = p[key];
      if (v.json().is_boolean() && !v.json().get<bool>()) {
        out->reset();
        return;
      }
      if (!v.json().is_string()) {
        v.fail("must be an absolute file path, or false for none");
      }
      auto path = v.string();
      if (path.empty() || path.front() != '/' || path.back() == '/') {
        v.fail("must be an absolute file path, or false for none");
      }
      if (path.find('\0') != std::string::npos) {
        v.fail("must not hold a NUL byte (no file has one in its path)");
      }
      *out = std::move(path);
    };
    file("status_file", &c.publish.status_file);
    file("nfd_file", &c.publish.nfd_file);
    file("metrics_file", &c.publish.metrics_file);
  }
  if (root.has("outcome")) {
    const auto o = root["outcome"];
    o.only_keys({"degraded"});
    if (o.has("degraded")) {
      c.ready_when_degraded = o["degraded"].one_of({"ready", "fail"}) == "ready";
    }
  }
  // By default the InfiniBand stack, where an entry is for InfiniBand PFs; an Ethernet
  // PF's driver and VF driver are checked for that PF alone (check_hardware).
  const bool infiniband = std::any_of(c.pfs.begin(), c.pfs.end(), [](const PfConfig& pf) {
    return pf.link_layer == LinkLayer::kInfiniBand;
  });
  if (!infiniband) {
    c.required_modules.clear();
  }
  if (root.has("required_modules")) {
    const auto m = root["required_modules"];
    c.required_modules.clear();
    for (std::size_t i = 0; i < m.array_size(); ++i) {
      c.required_modules.push_back(m[i].nonempty_string());
    }
  }
  if (root.has("firmware_minimums")) {
    const auto f = root["firmware_minimums"];
    if (!f.json().is_object()) {
      f.fail("must map PCI device IDs (\"0x1021\") to firmware versions");
    }
    for (const auto& [key, value] : f.json().items()) {
      const json key_json = key;
      const auto id = pci_id(JsonReader(key_json, f.path() + "." + key));
      const JsonReader v(value, f.path() + "." + key);
      auto version = Version::parse(v.string());
      if (!version) {
        v.fail(version.error().message);
      }
      c.firmware_minimums.insert_or_assign(id, version.value());
    }
  }
  // Two entries selecting the same PF by address would fight over it.
  std::set<PciAddress> by_address;
  for (std::size_t i = 0; i < c.pfs.size(); ++i) {
    for (const auto& pci : c.pfs[i].select.pci) {
      if (!by_address.insert(pci).second) {
        pfs[i]["select"]["pci"].fail("PF " + pci.str() + " is selected twice");
      }
    }
  }
  return c;
}

}  // namespace

const char* to_string(LinkLayer layer) {
  return layer == LinkLayer::kInfiniBand ? "InfiniBand" : "Ethernet";
}

Result<Config> parse_config(const std::vector<ConfigSource>& sources) {
  if (sources.empty()) {
    return Error{"no configuration file"};
  }
  json merged = json::object();
  std::map<std::string, std::string> owner;  // top-level key -> file that last set it
  for (const auto& source : sources) {
    auto parsed = parse_json_document(source.path, source.text);
    if (!parsed) {
      return parsed.error();
    }
    const json doc = std::move(parsed).value();
    if (!doc.is_object()) {
      return Error{source.path + ": $: must be a JSON object"};
    }
    for (const auto& [key, value] : doc.items()) {
      owner[key] = source.path;
    }
    merged.merge_patch(doc);
  }
  // A key no file set is blamed on the main file.
  const auto file_of = [&](const std::string& key) {
    const auto it = owner.find(key);
    return it != owner.end() ? it->second : sources.front().path;
  };
  try {
    auto config = config_from(merged, file_of("pfs"));
    for (const auto& source : sources) {
      config.files.push_back(source.path);
    }
    if (auto problem = publish_paths_problem(config.publish, config.files)) {
      return Error{file_of("publish") + ": " + text::printable(*problem)};
    }
    return config;
  } catch (const JsonError& e) {
    // The file to blame is the one that last set the top-level key the path is under.
    const auto key = e.path.size() > 2 ? e.path.substr(2, e.path.find_first_of(".[", 2) - 2) : "";
    return Error{file_of(key) + ": " + text::printable(e.path) + ": " + text::printable(e.what)};
  }
}

}  // namespace vfready::model
