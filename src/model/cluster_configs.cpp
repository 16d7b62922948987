// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/cluster_configs.hpp"

#include <map>
#include <set>
#include <vector>

#include "vfready/model/status_json.hpp"

namespace vfready::model {

namespace {

// A configured PF as the cluster sees it: the name vfready gives it, its IDs.
struct Rail {
  std::string name;
  std::string vendor;
  std::string device;
  std::string vf_device;
  unsigned vfs = 0;
  bool ethernet = false;  // its link layer: an Ethernet PF's VFs are netdevices, not IPoIB
};

std::vector<Rail> rails_of(const nlohmann::json& status) {
  std::vector<Rail> rails;
  const auto pfs = status.find("pfs");
  if (pfs == status.end() || !pfs->is_array()) {
    return rails;
  }
  for (const auto& pf : *pfs) {
    Rail r;
    // The name vfready gives it: what the PF is called once it is up, even while not.
    r.name = text_at(pf, "configured_name");
    if (r.name.empty()) {
      r.name = text_at(pf, "name");
    }
    r.vendor = text_at(pf, "vendor");
    r.device = text_at(pf, "device");
    r.vf_device = text_at(pf, "vf_device");
    r.vfs = number_at(pf, "vfs_configured", 0U);
    r.ethernet = text_at(pf, "link_layer") == "Ethernet";
    if (!r.name.empty()) {
      rails.push_back(std::move(r));
    }
  }
  return rails;
}

nlohmann::json sorted(const std::set<std::string>& s) { return nlohmann::json(s); }

std::set<std::string> field(const std::vector<Rail>& rails, std::string Rail::*member) {
  std::set<std::string> out;
  for (const auto& r : rails) {
    if (!(r.*member).empty()) {
      out.insert(r.*member);
    }
  }
  return out;
}

std::vector<std::string> names(const std::vector<Rail>& rails) {
  std::vector<std::string> out;
  out.reserve(rails.size());
  for (const auto& r : rails) {
    out.push_back(r.name);
  }
  return out;
}

std::string or_default(const std::string& value, const char* fallback) {
  return value.empty() ? fallback : value;
}

std::vector<Rail> of_layer(const std::vector<Rail>& rails, bool ethernet) {
  std::vector<Rail> out;
  for (const auto& r : rails) {
    if (r.ethernet == ethernet) {
      out.push_back(r);
    }
  }
  return out;
}

// One resource for the InfiniBand VFs (mlx5_core's, RDMA) and one for the Ethernet VFs
// (any VF driver: selected by their IDs and PF names).
std::string sriov_device_plugin(const std::vector<Rail>& rails, const ClusterConfigOptions& o) {
  nlohmann::json resources = nlohmann::json::array();
  if (const auto ib = of_layer(rails, false); !ib.empty()) {
    const nlohmann::json selector = {{"vendors", sorted(field(ib, &Rail::vendor))},
                                     {"devices", sorted(field(ib, &Rail::vf_device))},
                                     {"drivers", {"mlx5_core"}},
                                     {"pfNames", names(ib)},
                                     {"linkTypes", {"infiniband"}},
                                     {"isRdma", true}};
    resources.push_back({{"resourceName", or_default(o.resource_name, "ib_vfs")},
                         {"resourcePrefix", or_default(o.resource_prefix, "nvidia.com")},
                         {"selectors", {selector}}});
  }
  if (const auto eth = of_layer(rails, true); !eth.empty()) {
    const nlohmann::json selector = {{"vendors", sorted(field(eth, &Rail::vendor))},
                                     {"devices", sorted(field(eth, &Rail::vf_device))},
                                     {"pfNames", names(eth)},
                                     {"linkTypes", {"ether"}}};
    resources.push_back(
        {{"resourceName", resources.empty() ? or_default(o.resource_name, "eth_vfs") : "eth_vfs"},
         {"resourcePrefix", or_default(o.resource_prefix, "nvidia.com")},
         {"selectors", {selector}}});
  }
  const nlohmann::json config = {{"resourceList", resources}};
  return config.dump(2) + "\n";
}

std::string rdma_shared_device_plugin(const std::vector<Rail>& all, const ClusterConfigOptions& o) {
  const auto rails = of_layer(all, false);  // the InfiniBand HCAs
  nlohmann::json entry = {{"resourceName", or_default(o.resource_name, "rdma_shared_ib")},
                          {"rdmaHcaMax", 63},
                          {"selectors",
                           {{"vendors", sorted(field(rails, &Rail::vendor))},
                            {"deviceIDs", sorted(field(rails, &Rail::device))},
                            {"drivers", {"mlx5_core"}},
                            {"ifNames", names(rails)},
                            {"linkTypes", {"infiniband"}}}}};
  if (!o.resource_prefix.empty()) {
    entry["resourcePrefix"] = o.resource_prefix;
  }
  const nlohmann::json config = {{"periodicUpdateInterval", 300}, {"configList", {entry}}};
  return config.dump(2) + "\n";
}

// A YAML scalar that no YAML reader takes for a number, a boolean or null.
std::string quoted(const std::string& s) { return nlohmann::json(s).dump(); }

std::string sriov_network_node_policy(const std::vector<Rail>& rails,
                                      const ClusterConfigOptions& o) {
  // The Ethernet VFs' resource, as sriov_device_plugin() names it.
  const std::string eth_resource =
      of_layer(rails, false).empty() ? or_default(o.resource_name, "eth_vfs") : "eth_vfs";
  // One policy per PF device ID: its nicSelector matches PFs of one kind.
  std::map<std::string, std::vector<Rail>> by_device;
  for (const auto& r : rails) {
    by_device[std::string(r.ethernet ? "eth:" : "ib:") + r.vendor + ":" + r.device].push_back(r);
  }
  std::string out;
  for (const auto& [key, group] : by_device) {
    unsigned vfs = group.front().vfs;
    for (const auto& r : group) {
      vfs = std::min(vfs, r.vfs);  // externallyManaged: at most the VFs each PF has
    }
    std::string pf_names;
    for (const auto& r : group) {
      pf_names += (pf_names.empty() ? "" : ", ") + quoted(r.name);
    }
    const auto device = group.front().device;
    out += (out.empty() ? "" : "---\n");
    out +=
        "apiVersion: sriovnetwork.openshift.io/v1\n"
        "kind: SriovNetworkNodePolicy\n"
        "metadata:\n"
        "  name: " +
        quoted(std::string(group.front().ethernet ? "vfready-eth-" : "vfready-ib-") +
               (device.empty() ? std::string("unknown") : device)) +
        "\n"
        "  namespace: " +
        quoted(or_default(o.ns, "sriov-network-operator")) +
        "\n"
        "spec:\n"
        "  resourceName: " +
        quoted(group.front().ethernet ? eth_resource : or_default(o.resource_name, "ib_vfs")) +
        "\n"
        "  nodeSelector:\n"
        "    feature.node.kubernetes.io/network-sriov.capable: \"true\"\n"
        "  numVfs: " +
        std::to_string(vfs) +
        "\n"
        "  nicSelector:\n"
        "    vendor: " +
        quoted(group.front().vendor) +
        "\n"
        "    deviceID: " +
        quoted(device) +
        "\n"
        "    pfNames: [" +
        pf_names +
        "]\n"
        "  deviceType: netdevice\n" +
        std::string(group.front().ethernet
                        ? "  linkType: eth\n"
                          "  # vfready creates the VFs and sets their MACs: the operator must do "
                          "neither.\n"
                        : "  isRdma: true\n"
                          "  linkType: ib\n"
                          "  # vfready creates the VFs and sets their GUIDs: the operator must do "
                          "neither.\n") +
        "  externallyManaged: true\n";
  }
  return out;
}

}  // namespace

std::vector<std::string> render_warnings(const nlohmann::json& status) {
  std::vector<std::string> out;
  const auto pfs = status.find("pfs");
  if (pfs == status.end() || !pfs->is_array()) {
    return out;
  }
  for (const auto& pf : *pfs) {
    const auto pci = text_at(pf, "pci", "?");
    auto name = text_at(pf, "configured_name");
    if (name.empty()) {
      name = text_at(pf, "name");
    }
    const auto state = text_at(pf, "state", "unknown");
    if (name.empty()) {
      out.push_back("PF " + pci + " has no name to select it by: it is not in the output");
    } else if (state != "ready") {
      out.push_back("PF " + pci + " (" + name + ") is " + state +
                    ", not ready: it is in the output as configured, but its VFs are not "
                    "there to use until it is ready (vfreadyctl status)");
    }
  }
  return out;
}

Result<std::string> render_cluster_config(const std::string& target, const nlohmann::json& status,
                                          const ClusterConfigOptions& options) {
  static const std::set<std::string> kTargets = {"sriov-device-plugin", "rdma-shared-device-plugin",
                                                 "sriov-network-node-policy"};
  if (!kTargets.contains(target)) {
    return Error{"unknown target \"" + target +
                 "\" (valid: sriov-device-plugin, rdma-shared-device-plugin, "
                 "sriov-network-node-policy)"};
  }
  const auto rails = rails_of(status);
  if (rails.empty()) {
    return Error{
        "the status has no configured PF with a name: give the PFs a pf_name in the "
        "configuration, so that the cluster's agents can select them"};
  }
  if (target == "sriov-network-node-policy") {
    if (!options.configmap.empty()) {
      return Error{
          "--configmap wraps a device plugin's config.json; a SriovNetworkNodePolicy "
          "is a resource of its own (apply it as it is)"};
    }
    return sriov_network_node_policy(rails, options);
  }
  auto config = target == "sriov-device-plugin" ? sriov_device_plugin(rails, options)
                                                : rdma_shared_device_plugin(rails, options);
  if (options.configmap.empty()) {
    return config;
  }
  // The device plugins read config.json from a ConfigMap mounted into their pods; the
  // JSON is a literal block, each line indented under its key.
  std::string out = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " +
                    nlohmann::json(options.configmap).dump() + "\n  namespace: " +
                    nlohmann::json(options.ns.empty() ? "kube-system" : options.ns).dump() +
                    "\ndata:\n  config.json: |\n";
  std::size_t from = 0;
  while (from < config.size()) {
    const auto end = config.find('\n', from);
    out += "    " + config.substr(from, end - from) + "\n";
    from = end == std::string::npos ? config.size() : end + 1;
  }
  return out;
}

}  // namespace vfready::model
