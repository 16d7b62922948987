// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/config_generator.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

namespace vfready::model {

namespace {

constexpr uint16_t kMellanox = 0x15b3;
constexpr uint16_t kDefaultVfs = 8;

// Why a function is not selected, or "" when it is.
std::string why_left_out(const PfInfo& f) {
  if (f.vendor != kMellanox) {
    return "not an NVIDIA/Mellanox device";
  }
  if (f.driver != "mlx5_core") {
    return "not bound to mlx5_core";
  }
  if (f.stuck) {
    return "stuck: " + *f.stuck;
  }
  if (!f.sriov || f.totalvfs == 0) {
    return "no SR-IOV (mlxconfig -d " + f.pci.str() + " set SRIOV_EN=1 NUM_OF_VFS=8)";
  }
  if (f.ports.empty() || f.ports.front().link_layer != "InfiniBand") {
    return (f.ports.empty() ? std::string("no RDMA port") : f.ports.front().link_layer) +
           ", not InfiniBand";
  }
  return "";
}

}  // namespace

GeneratedConfig generate_config(const HostInfo& host, const std::string& schema_path) {
  GeneratedConfig out;
  // One entry per VF count, each PF in PCI order; pf_index counts all of them, so names
  // stay unique across entries.
  std::map<uint16_t, std::vector<std::string>> by_count;
  for (const auto& f : host.functions) {
    const auto why = why_left_out(f);
    if (!why.empty()) {
      out.left_out.push_back(f.pci.str() + ": " + why);
      continue;
    }
    const uint16_t vfs = f.numvfs > 0 ? f.numvfs : std::min(kDefaultVfs, f.totalvfs);
    by_count[vfs].push_back(f.pci.str());
    out.selected.push_back(f.pci.str());
  }
  nlohmann::ordered_json pfs = nlohmann::ordered_json::array();
  for (const auto& [vfs, pcis] : by_count) {
    pfs.push_back({{"select", {{"pci", pcis}}},
                   {"vfs", vfs},
                   {"link_layer", "InfiniBand"},
                   {"pf_name", "ibs{pf_index}"},
                   {"vf_name", "ibs{pf_index}v{vf}"},
                   {"pf_altnames", {"ib-{pci}"}},
                   {"vf_altnames", {"ib-{vf_pci}"}},
                   {"guid", {{"scheme", "derived"}, {"policy", "Follow"}}},
                   {"require_port_active", true}});
  }
  const nlohmann::ordered_json config = {
      {"$schema", schema_path}, {"pfs", pfs}, {"outcome", {{"degraded", "ready"}}}};
  out.json = config.dump(2) + "\n";
  return out;
}

}  // namespace vfready::model
