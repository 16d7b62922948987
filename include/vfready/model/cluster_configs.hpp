// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "vfready/model/result.hpp"

// Configs of the cluster's node agents that must agree with what vfready brought up,
// derived from its status (as Describe() returns it): the device IDs it read from the
// host, the names it gave the PFs, the VF counts it made. docs/kubernetes.md shows them.
namespace vfready::model {

struct ClusterConfigOptions {
  std::string resource_name;    // "" for each target's default
  std::string resource_prefix;  // "" for the default (nvidia.com)
  std::string ns;         // the namespace (of the policy, or the ConfigMap); "" for the default
  std::string configmap;  // wrap a device plugin's config.json in a ConfigMap of this name
};

// `target`: sriov-device-plugin (its config.json), rdma-shared-device-plugin (its
// config.json), sriov-network-node-policy (SriovNetworkNodePolicy YAML, one per PF
// device ID, externallyManaged). An error names what is missing (an unknown target, a
// status without named PFs).
Result<std::string> render_cluster_config(const std::string& target, const nlohmann::json& status,
                                          const ClusterConfigOptions& options);

// What a user of a rendered config should know of the status it came from: one line per
// PF that is not ready (it is in the config as configured, not as it is now) and per PF
// left out (no name to select it by).
std::vector<std::string> render_warnings(const nlohmann::json& status);

}  // namespace vfready::model
