// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/plan.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "vfready/model/guid_scheme.hpp"

namespace vfready::model {

namespace {

using Fields = std::map<std::string, std::string>;

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

std::vector<Selected> select_pfs(const Config& config, const HostInfo& host) {
  std::vector<Selected> out;
  for (const auto& entry : config.pfs) {
    std::vector<PciAddress> chosen = entry.select.pci;
    if (chosen.empty()) {
      for (const auto& f : host.functions) {
        const bool layer_ok =
            !entry.select.link_layer || f.link_layer() == to_string(*entry.select.link_layer);
        if (f.device == entry.select.device && layer_ok) {
          chosen.push_back(f.pci);
        }
      }
    }
    std::sort(chosen.begin(), chosen.end());
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      out.push_back({chosen[i], &entry, static_cast<uint16_t>(i)});
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Selected& a, const Selected& b) { return a.pci < b.pci; });
  return out;
}

// Renders and validates one name; the error says which template made it and for what.
template <class Name>
Result<Name> render(const NameTemplate& t, const Fields& fields, const PfConfig& entry,
                    const std::string& key, const std::string& what) {
  const auto text = t.render(fields);
  auto name = Name::parse(text);
  if (!name) {
    return Error{entry.source + ": " + entry.json_path + "." + key + ": template \"" + t.text() +
                 "\" gives " + name.error().message + " for " + what};
  }
  return name;
}

struct Claims {
  // name -> who has it, so a duplicate's message names both.
  std::map<std::string, std::string> names;
  std::map<Guid, std::string> guids;
};

std::optional<Error> claim_name(Claims& claims, const std::string& name, const std::string& who,
                                const PfConfig& entry) {
  auto [it, inserted] = claims.names.emplace(name, who);
  if (inserted) {
    return std::nullopt;
  }
  return Error{entry.source + ": " + entry.json_path + ": name \"" + name + "\" of " + who +
               " is also the name of " + it->second + ": names must be unique on the node"};
}

// Renders a name and claims it for `who`: an invalid or taken name is an error naming
// the template's place in the config.
template <class Name>
Result<Name> claim(const NameTemplate& t, const Fields& fields, const PfConfig& entry,
                   const std::string& key, const std::string& who, Claims& claims) {
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
                                            const std::string& key, const std::string& who,
                                            Claims& claims) {
  std::vector<AltName> out;
  for (std::size_t a = 0; a < templates.size(); ++a) {
    auto alt = claim<AltName>(templates[a], fields, entry, key + "[" + std::to_string(a) + "]", who,
                              claims);
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

Result<Plan> make_plan(const Config& config, const HostInfo& host) {
  Plan plan;
  Claims claims;
  const auto selected = select_pfs(config, host);
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
    pf.mtu = entry.pf_mtu;
    if (info == nullptr) {
      pf.problems.push_back(
          problem(EventKind::kPfMissing,
                  "PF " + pci.str() + " is not on this host (no such PCI function)", pci.str()));
      plan.pfs.push_back(std::move(pf));
      continue;
    }
    Fields fields = {{"pf_index", std::to_string(index)},
                     {"pf_kernel_name", info->netdev.value_or("")},
                     {"pci", pci_for_names(pci)},
                     {"numa_node", std::to_string(info->numa_node)}};
    const std::string pf_who = "PF " + pci.str();
    if (entry.pf_name) {
      auto name = claim<IfName>(*entry.pf_name, fields, entry, "pf_name", pf_who, claims);
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
    const bool derived = entry.guid.scheme == GuidScheme::kDerived;
    if (derived && !info->node_guid) {
      pf.problems.push_back(
          problem(EventKind::kConfigInvalid,
                  "PF " + pci.str() +
                      " has no InfiniBand node GUID, which the derived GUID scheme needs: choose "
                      "the \"pool\" or \"explicit\" scheme for it",
                  pci.str()));
    }
    for (uint16_t n = 0; n < entry.vfs; ++n) {
      VfTarget vf;
      vf.index = n;
      vf.pci = info->vf_address(n);
      vf.mtu = entry.vf_mtu;
      const std::string who = "VF " + std::to_string(n) + " of " + pci.str();
      fields["vf"] = std::to_string(n);
      fields["vf_pci"] = vf.pci ? pci_for_names(*vf.pci) : "";
      if (entry.vf_name) {
        auto name = claim<IfName>(*entry.vf_name, fields, entry, "vf_name", who, claims);
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
      switch (entry.guid.scheme) {
        case GuidScheme::kDerived:
          vf.guid = info->node_guid ? derive_vf_guid(*info->node_guid, n) : Guid{0};
          break;
        case GuidScheme::kPool: {
          const uint64_t offset = uint64_t{ordinal} * entry.vfs + n;
          const uint64_t size = entry.guid.pool_last.value() - entry.guid.pool_first.value();
          if (offset > size) {
            return Error{entry.source + ": " + entry.json_path + ".guid: the pool " +
                         entry.guid.pool_first.str() + "-" + entry.guid.pool_last.str() +
                         " has too few GUIDs for " + who};
          }
          vf.guid = Guid{entry.guid.pool_first.value() + offset};
          break;
        }
        case GuidScheme::kExplicit:
          vf.guid = entry.guid.guids.at(n);
          break;
      }
      if (!vf.guid.is_zero()) {
        auto [it, inserted] = claims.guids.emplace(vf.guid, who);
        if (!inserted) {
          return Error{entry.source + ": " + entry.json_path + ".guid: GUID " + vf.guid.str() +
                       " of " + who + " is also the GUID of " + it->second};
        }
      }
      pf.vf.push_back(std::move(vf));
    }
    plan.pfs.push_back(std::move(pf));
  }
  return plan;
}

}  // namespace vfready::model
