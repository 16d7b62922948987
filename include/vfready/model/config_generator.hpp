// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include "vfready/model/inventory.hpp"

// A first configuration for the host vfreadyd runs on (`vfreadyd --generate-config`).
namespace vfready::model {

struct GeneratedConfig {
  std::string json;                   // the configuration, ending in a newline
  std::vector<std::string> selected;  // the PFs it selects, by PCI address
  std::vector<std::string> left_out;  // "0000:2a:00.0: Ethernet, not InfiniBand", ...
};

// Selects by PCI address every NVIDIA/Mellanox PF bound to mlx5_core with SR-IOV and an
// InfiniBand port; each asks for the VFs it has now, or 8 (at most what it offers) when
// it has none. Names ibs{pf_index} and ibs{pf_index}v{vf}, altnames from the PCI address,
// GUIDs derived from the node GUID, "$schema" at `schema_path`.
GeneratedConfig generate_config(const HostInfo& host, const std::string& schema_path);

}  // namespace vfready::model
