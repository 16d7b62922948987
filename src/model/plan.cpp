// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/plan.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>

#include "vf_macs.hpp"
#include "vfready/model/guid_scheme.hpp"

namespace vfready::model {

namespace {

using Fields = std::map<std::string, std::string>;

constexpr uint16_t kMellanox = 0x15b3;

const PfInfo* find_pf(const HostInfo& host, const PciAddress& pci) {
  for (const auto& f : host.functions) {
    if (f.pci == pci) {
      return &f;
    }
  }
  return nullptr;
}

struct Selected {
  PciAddress pci;
  const PfConfig* config;
  uint16_t ordinal;  // position within its config entry
};

std::string entry_name(const PfConfig& entry) {
  return entry.source + " (" + entry.json_path + ")";
}

std::string device_text(uint16_t device) {
  char buf[8];
  static_cast<void>(std::snprintf(buf, sizeof buf, "0x%04x", device));
  return buf;
}

// The PFs each entry selects, in PCI order. Each PF once; a device selector keeps to
// the entry's link layer (functions it leaves out for that are `warnings`), and finds
// at least one PF unless the entry is optional.
Result<std::vector<Selected>> select_pfs(const Config& config, const HostInfo& host,
                                         std::vector<Problem>& warnings) {
  std::vector<Selected> out;
  std::map<PciAddress, const PfConfig*> owner;
  for (const auto& entry : config.pfs) {
    std::vector<PciAddress> chosen;
    if (!entry.select.pci.empty()) {
      for (const auto& pci : entry.select.pci) {
        if (!entry.optional || find_pf(host, pci) != nullptr) {
          chosen.push_back(pci);
        }
      }
    } else {
      const auto layer = to_string(entry.select.link_layer.value_or(entry.link_layer));
      for (const auto& f : host.functions) {
        // Device IDs are NVIDIA/Mellanox's: another vendor's PF is selected by address.
        if (f.device != entry.select.device || f.vendor != kMellanox) {
          continue;
        }
        if (f.link_layer() == layer) {
          chosen.push_back(f.pci);
          continue;
        }
        warnings.push_back(
            problem(EventKind::kLinkLayerMismatch,
                    "PF " + f.pci.str() + " (device " + device_text(f.device) +
                        ") is not selected by " + entry_name(entry) + ": its link layer is " +
                        (f.link_layer().empty() ? std::string("unknown") : f.link_layer()) +
                        ", not " + layer + "; select it by \"pci\" if it is meant to be managed",
                    f.pci.str()));
      }
      if (chosen.empty() && !entry.optional) {
        return Error{entry.source + ": " + entry.json_path + ".select: no PF on this host is a " +
                     device_text(entry.select.device.value_or(0)) + " with link layer " + layer +
                     " (lspci -D -d 15b3: lists them); set \"optional\": true if this host "
                     "need not have one"};
      }
    }
    std::sort(chosen.begin(), chosen.end());
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      auto [it, inserted] = owner.emplace(chosen[i], &entry);
      if (!inserted) {
        return Error{entry.source + ": " + entry.json_path + ".select: PF " + chosen[i].str() +
                     " is selected here and by " + entry_name(*it->second) +
                     ": select each PF in one entry"};
      }
      out.push_back({chosen[i], &entry, static_cast<uint16_t>(i)});
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Selected& a, const Selected& b) { return a.pci < b.pci; });
  return out;
}

// Who a name or GUID is for, written out only for a message ("VF 3 of 0000:18:00.0"):
// a plan of 2,000 VFs makes none of these texts when all is well.
struct Who {
  PciAddress pf;
  int vf = -1;         // -1: the PF itself
  std::string held{};  // or what holds it, as said (a netdev vfready leaves as it is)
  [[nodiscard]] std::string text() const {
    if (!held.empty()) {
      return held;
    }
    return vf < 0 ? "PF " + pf.str() : "VF " + std::to_string(vf) + " of " + pf.str();
  }
};

// A template's place in the config: `key`, or its element `index` when one is given.
struct Key {
  const char* key;
  int index = -1;
  [[nodiscard]] std::string text() const {
    return index < 0 ? std::string(key) : std::string(key) + "[" + std::to_string(index) + "]";
  }
};

// Renders and validates one name; the error says which template made it and for what.
template <class Name>
Result<Name> render(const NameTemplate& t, const Fields& fields, const PfConfig& entry, Key key,
                    const Who& what) {
  const auto text = t.render(fields);
  auto name = Name::parse(text);
  if (!name) {
    return Error{entry.source + ": " + entry.json_path + "." + key.text() + ": template \"" +
                 t.text() + "\" gives " + name.error().message + " for " + what.text()};
  }
  return name;
}

struct Claims {
  // name -> who has it, so a duplicate's message names both (hashed: a name or two for
  // each VF of the node, and every netdev already there).
  std::unordered_map<std::string, Who> names;
  std::map<Guid, Who> guids;
  std::map<Mac, Who> macs;
};

std::optional<Error> claim_name(Claims& claims, const std::string& name, const Who& who,
                                const PfConfig& entry) {
  auto [it, inserted] = claims.names.emplace(name, who);
  if (inserted) {
    return std::nullopt;
  }
  return Error{entry.source + ": " + entry.json_path + ": name \"" + name + "\" of " + who.text() +
               " is also the name of " + it->second.text() + ": names must be unique on the node"};
}

// Renders a name and claims it for `who`: an invalid or taken name is an error naming
// the template's place in the config.
template <class Name>
Result<Name> claim(const NameTemplate& t, const Fields& fields, const PfConfig& entry, Key key,
                   const Who& who, Claims& claims) {
  auto name = render<Name>(t, fields, entry, key, who);
  if (!name) {
    return name;
  }
  if (auto e = claim_name(claims, name->str(), who, entry)) {
    return *e;
  }
  return name;
}

Result<std::vector<AltName>> claim_altnames(const std::vector<NameTemplate>& templates,
                                            const Fields& fields, const PfConfig& entry,
                                            const char* key, const Who& who, Claims& claims) {
  std::vector<AltName> out;
  for (std::size_t a = 0; a < templates.size(); ++a) {
    auto alt = claim<AltName>(templates[a], fields, entry, {key, static_cast<int>(a)}, who, claims);
    if (!alt) {
      return alt.error();
    }
    out.push_back(alt.value());
  }
  return out;
}

}  // namespace

std::string pci_for_names(const PciAddress& pci) {
  auto s = pci.str();
  std::replace(s.begin(), s.end(), ':', '-');
  return s;
}

// Names held now by netdevs vfready does not manage (functions not selected, and their
// VFs), and the kernel names of selected PFs that keep them: a rendered name may not
// take one.
void claim_held_names(Claims& claims, const std::vector<Selected>& selected, const HostInfo& host) {
  std::map<PciAddress, const PfConfig*> managed;
  for (const auto& s : selected) {
    managed[s.pci] = s.config;
  }
  for (const auto& f : host.functions) {
    auto it = managed.find(f.pci);
    if (it != managed.end()) {
      if (!it->second->pf_name && f.netdev) {
        claims.names.emplace(*f.netdev,
                             Who{f.pci, -1, "PF " + f.pci.str() + " (its kernel name, kept)"});
      }
      continue;
    }
    if (f.netdev) {
      claims.names.emplace(
          *f.netdev,
          Who{f.pci, -1, "the netdev of " + f.pci.str() + ", which vfready does not manage"});
    }
    for (const auto& vf : f.vfs) {
      if (vf.netdev) {
        claims.names.emplace(*vf.netdev, Who{f.pci, -1,
                                             "the netdev of VF " + vf.pci.str() + " of " +
                                                 f.pci.str() + ", which vfready does not manage"});
      }
    }
  }
}

// "is VF 3 of PF 0000:18:00.0" when `pci` is a VF of a PF on the host.
std::optional<std::string> vf_of(const HostInfo& host, const PciAddress& pci) {
  for (const auto& f : host.functions) {
    for (const auto& vf : f.vfs) {
      if (vf.pci == pci) {
        return "is VF " + std::to_string(vf.index) + " of PF " + f.pci.str() + ", not a PF";
      }
    }
  }
  return std::nullopt;
}

Selectable selectable(const Config& config) {
  Selectable out;
  for (const auto& entry : config.pfs) {
    out.pci.insert(entry.select.pci.begin(), entry.select.pci.end());
    if (entry.select.device) {
      out.devices.insert(*entry.select.device);
    }
  }
  return out;
}

Result<Plan> make_plan(const Config& config, const HostInfo& host) {
  Plan plan;
  Claims claims;
  auto picked = select_pfs(config, host, plan.warnings);
  if (!picked) {
    return picked.error();
  }
  const auto& selected = picked.value();
  claim_held_names(claims, selected, host);
  for (std::size_t index = 0; index < selected.size(); ++index) {
    const auto& [pci, entry_ptr, ordinal] = selected[index];
    const PfConfig& entry = *entry_ptr;
    const PfInfo* info = find_pf(host, pci);
    PfTarget pf;
    pf.pci = pci;
    pf.source = entry.source;
    pf.json_path = entry.json_path;
    pf.pf_index = static_cast<uint16_t>(index);
    pf.present = info != nullptr;
    pf.vfs = entry.vfs;
    pf.link_layer = entry.link_layer;
    pf.require_port_active = entry.require_port_active;
    pf.guid_policy = entry.guid.policy;
    pf.vf_port = entry.vf_port;
    pf.mtu = entry.pf_mtu;
    if (info == nullptr) {
      pf.problems.push_back(
          problem(EventKind::kPfMissing,
                  "PF " + pci.str() + " " +
                      vf_of(host, pci).value_or("is not on this host (no such PCI function)"),
                  pci.str()));
      plan.pfs.push_back(std::move(pf));
      continue;
    }
    Fields fields = {{"pf_index", std::to_string(index)},
                     {"pf_kernel_name", info->netdev.value_or("")},
                     {"pci", pci_for_names(pci)},
                     {"numa_node", std::to_string(info->numa_node)}};
    const Who pf_who{pci};
    if (entry.pf_name) {
      auto name = claim<IfName>(*entry.pf_name, fields, entry, {"pf_name"}, pf_who, claims);
      if (!name) {
        return name.error();
      }
      pf.name = name.value();
    }
    fields["pf_name"] = pf.name ? pf.name->str() : info->netdev.value_or("");
    auto pf_alts = claim_altnames(entry.pf_altnames, fields, entry, "pf_altnames", pf_who, claims);
    if (!pf_alts) {
      return pf_alts.error();
    }
    pf.altnames = pf_alts.value();
    // Ethernet VFs have no GUID: their identity is their MAC.
    const bool guids = entry.link_layer == LinkLayer::kInfiniBand;
    const bool derived = guids && entry.guid.scheme == GuidScheme::kDerived;
    // A PF with no driver, or a driver in its error state (no netdev, no RDMA device), has
    // no node GUID to read: the hardware check names that cause, not its symptom here.
    const bool healthy = info->driver && (info->netdev || info->ib_device);
    if (!guids && healthy && entry.mac.scheme == MacScheme::kDerived && !info->permanent_mac) {
      pf.problems.push_back(problem(
          EventKind::kConfigInvalid,
          "PF " + pci.str() +
              " has no burned-in MAC to read (its netdev's addr_assign_type is not 0, or it has "
              "no Ethernet netdev), from which the derived MAC scheme makes VF MACs: choose the "
              "\"pool\" or \"explicit\" scheme for it",
          pci.str()));
    }
    if (derived && healthy && (!info->node_guid || info->node_guid->is_zero())) {
      pf.problems.push_back(problem(
          EventKind::kConfigInvalid,
          "PF " + pci.str() +
              (info->node_guid ? " has node GUID " + Guid{0}.str() + ", from which"
                               : std::string(" has no readable InfiniBand node GUID, from which")) +
              " the derived GUID scheme cannot make VF GUIDs (read the kernel log and the "
              "firmware's GUID settings; or choose the \"pool\" or \"explicit\" scheme for it)",
          pci.str()));
    }
    for (uint16_t n = 0; n < entry.vfs; ++n) {
      VfTarget vf;
      vf.index = n;
      vf.pci = info->vf_address(n);
      vf.mtu = entry.vf_mtu;
      const Who who{pci, n};
      fields["vf"] = std::to_string(n);
      fields["vf_pci"] = vf.pci ? pci_for_names(*vf.pci) : "";
      if (entry.vf_name) {
        auto name = claim<IfName>(*entry.vf_name, fields, entry, {"vf_name"}, who, claims);
        if (!name) {
          return name.error();
        }
        vf.name = name.value();
      }
      auto vf_alts = claim_altnames(entry.vf_altnames, fields, entry, "vf_altnames", who, claims);
      if (!vf_alts) {
        return vf_alts.error();
      }
      vf.altnames = vf_alts.value();
      switch (guids ? entry.guid.scheme : GuidScheme::kExplicit) {
        case GuidScheme::kDerived:
          vf.guid = info->node_guid ? derive_vf_guid(*info->node_guid, n) : Guid{0};
          break;
        case GuidScheme::kPool: {
          const uint64_t offset = uint64_t{ordinal} * entry.vfs + n;
          const uint64_t size = entry.guid.pool_last.value() - entry.guid.pool_first.value();
          if (offset > size) {
            return Error{entry.source + ": " + entry.json_path + ".guid: the pool " +
                         entry.guid.pool_first.str() + "-" + entry.guid.pool_last.str() +
                         " has too few GUIDs for " + who.text()};
          }
          vf.guid = Guid{entry.guid.pool_first.value() + offset};
          break;
        }
        case GuidScheme::kExplicit:
          vf.guid = guids ? entry.guid.guids.at(n) : Guid{0};
          break;
      }
      if (!guids) {
        auto mac = plan_mac(entry, *info, ordinal, n);
        if (!mac) {
          return Error{entry.source + ": " + entry.json_path + ".mac: the pool " +
                       entry.mac.pool_first.str() + "-" + entry.mac.pool_last.str() +
                       " has too few MACs for " + who.text()};
        }
        vf.mac = *mac;
        if (vf.mac) {
          auto [it, inserted] = claims.macs.emplace(*vf.mac, who);
          if (!inserted) {
            return Error{entry.source + ": " + entry.json_path + ".mac: MAC " + vf.mac->str() +
                         " of " + who.text() + " is also the MAC of " + it->second.text()};
          }
        }
      }
      if (!vf.guid.is_zero()) {
        auto [it, inserted] = claims.guids.emplace(vf.guid, who);
        if (!inserted) {
          return Error{entry.source + ": " + entry.json_path + ".guid: GUID " + vf.guid.str() +
                       " of " + who.text() + " is also the GUID of " + it->second.text()};
        }
      }
      pf.vf.push_back(std::move(vf));
    }
    plan.pfs.push_back(std::move(pf));
  }
  return plan;
}

}  // namespace vfready::model
