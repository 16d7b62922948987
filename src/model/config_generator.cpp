// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/config_generator.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

namespace vfready::model {

namespace {

constexpr uint16_t kMellanox = 0x15b3;
constexpr uint16_t kDefaultVfs = 8;

// Why a function is not selected, or "" when it is: an SR-IOV PF, bound, with its VF
// driver loaded; InfiniBand only on mlx5_core, Ethernet (RoCE or not) on any driver.
std::string why_left_out(const PfInfo& f) {
  const bool mellanox = f.vendor == kMellanox;
  if (f.stuck) {
    return "stuck: " + *f.stuck;
  }
  if (!f.driver) {
    return "no driver bound";
  }
  if (mellanox && f.driver != "mlx5_core") {
    return "not bound to mlx5_core";
  }
  if (!f.sriov || f.totalvfs == 0) {
    return mellanox ? "no SR-IOV (mlxconfig -d " + f.pci.str() + " set SRIOV_EN=1 NUM_OF_VFS=8)"
                    : std::string("no SR-IOV (enable it in the system firmware and the NIC's)");
  }
  const auto layer = f.link_layer();
  if (layer == "InfiniBand" && !f.mlx5()) {
    return "InfiniBand on " + *f.driver + ", which vfready does not drive";
  }
  if (layer != "InfiniBand" && layer != "Ethernet") {
    return "link layer " + (layer.empty() ? std::string("unknown") : layer);
  }
  if (f.mlx5()) {
    return "";  // mlx5_core takes its VFs too
  }
  if (f.vf_driver.empty()) {
    return "no module in modules.alias drives its VFs";
  }
  return "";
}

}  // namespace

GeneratedConfig generate_config(const HostInfo& host, const std::string& schema_path) {
  GeneratedConfig out;
  // One entry per link layer and VF count, each PF in PCI order; pf_index counts all of
  // them, so names stay unique across entries.
  std::map<std::pair<std::string, uint16_t>, std::vector<std::string>> by_kind;
  for (const auto& f : host.functions) {
    const auto why = why_left_out(f);
    if (!why.empty()) {
      out.left_out.push_back(f.pci.str() + ": " + why);
      continue;
    }
    const uint16_t vfs = f.numvfs > 0 ? f.numvfs : std::min(kDefaultVfs, f.totalvfs);
    by_kind[{f.link_layer(), vfs}].push_back(f.pci.str());
  }
  // {pf_index} counts every configured PF: Ethernet PFs between InfiniBand ones would
  // renumber the InfiniBand names (ibs1 gone, ibs3 where ibs2 was). Beside InfiniBand
  // PFs they are left out, for the operator to add.
  const bool infiniband = std::any_of(by_kind.begin(), by_kind.end(),
                                      [](const auto& k) { return k.first.first == "InfiniBand"; });
  for (auto it = by_kind.begin(); it != by_kind.end();) {
    if (infiniband && it->first.first == "Ethernet") {
      for (const auto& pci : it->second) {
        out.left_out.push_back(pci +
                               ": Ethernet beside InfiniBand PFs (its {pf_index} would renumber "
                               "theirs): add an entry for it by hand");
      }
      it = by_kind.erase(it);
      continue;
    }
    ++it;
  }
  for (const auto& f : host.functions) {
    for (const auto& [kind, pcis] : by_kind) {
      if (std::find(pcis.begin(), pcis.end(), f.pci.str()) != pcis.end()) {
        out.selected.push_back(f.pci.str());
      }
    }
  }
  nlohmann::ordered_json pfs = nlohmann::ordered_json::array();
  for (const auto& [kind, pcis] : by_kind) {
    const auto& [layer, vfs] = kind;
    if (layer == "InfiniBand") {
      pfs.push_back({{"select", {{"pci", pcis}}},
                     {"vfs", vfs},
                     {"link_layer", "InfiniBand"},
                     {"pf_name", "ibs{pf_index}"},
                     {"vf_name", "ibs{pf_index}v{vf}"},
                     {"pf_altnames", {"ib-{pci}"}},
                     {"vf_altnames", {"ib-{vf_pci}"}},
                     {"guid", {{"scheme", "derived"}, {"policy", "Follow"}}},
                     {"require_port_active", true}});
    } else {
      // An Ethernet PF keeps its name (the node's own traffic may run on it), and so do
      // its VFs udev's (by PCI path, the same at every boot).
      pfs.push_back({{"select", {{"pci", pcis}}},
                     {"vfs", vfs},
                     {"link_layer", "Ethernet"},
                     {"vf_altnames", {"vf-{vf_pci}"}}});
    }
  }
  const nlohmann::ordered_json config = {
      {"$schema", schema_path}, {"pfs", pfs}, {"outcome", {{"degraded", "ready"}}}};
  out.json = config.dump(2) + "\n";
  return out;
}

}  // namespace vfready::model
