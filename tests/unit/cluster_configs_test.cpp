// SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "vfready/model/cluster_configs.hpp"

using namespace vfready::model;
using testing::HasSubstr;

namespace {

nlohmann::json pf(const char* name, const char* configured, const char* device, unsigned vfs) {
  return {{"pci", "0000:18:00.0"},
          {"name", name ? nlohmann::json(name) : nlohmann::json()},
          {"configured_name", configured ? nlohmann::json(configured) : nlohmann::json()},
          {"vendor", "15b3"},
          {"device", device},
          {"vf_device", "101e"},
          {"vfs_configured", vfs}};
}

}  // namespace

TEST(AClusterConfig, SelectsTheNamesVfreadyGivesAndTheIdsItRead) {
  // The second PF failed before it was renamed: it is selected by its configured name.
  const nlohmann::json status = {{"pfs",
                                  {pf("ibs0", "ibs0", "1021", 8), pf("ibp64s0", "ibs1", "1021", 4),
                                   pf(nullptr, nullptr, "1021", 8)}}};
  auto dp = render_cluster_config("sriov-device-plugin", status, {});
  ASSERT_TRUE(dp) << dp.error().message;
  const auto j = nlohmann::json::parse(dp.value());
  const auto& sel = j["resourceList"][0]["selectors"][0];
  EXPECT_EQ(sel["pfNames"], nlohmann::json({"ibs0", "ibs1"}));
  EXPECT_EQ(sel["devices"], nlohmann::json({"101e"}));
  EXPECT_EQ(j["resourceList"][0]["resourceName"], "ib_vfs");

  auto policy = render_cluster_config(
      "sriov-network-node-policy", status,
      {.resource_name = "rail", .resource_prefix = "", .ns = "net", .configmap = ""});
  ASSERT_TRUE(policy) << policy.error().message;
  EXPECT_THAT(policy.value(), HasSubstr("  namespace: \"net\"\n"));
  EXPECT_THAT(policy.value(), HasSubstr("  resourceName: \"rail\"\n"));
  EXPECT_THAT(policy.value(), HasSubstr("  numVfs: 4\n"));  // no more than any PF has
  EXPECT_THAT(policy.value(), HasSubstr("    pfNames: [\"ibs0\", \"ibs1\"]\n"));
}

TEST(AClusterConfig, WritesOnePolicyPerPfDeviceId) {
  const nlohmann::json status = {
      {"pfs", {pf("ibs0", "ibs0", "1021", 8), pf("dpu0", "dpu0", "a2dc", 8)}}};
  auto policy = render_cluster_config("sriov-network-node-policy", status, {});
  ASSERT_TRUE(policy);
  EXPECT_THAT(policy.value(), HasSubstr("name: \"vfready-ib-1021\""));
  EXPECT_THAT(policy.value(), HasSubstr("---\n"));
  EXPECT_THAT(policy.value(), HasSubstr("name: \"vfready-ib-a2dc\""));
}

TEST(AClusterConfig, RefusesAnUnknownTargetAndAStatusWithoutNamedPfs) {
  auto unknown = render_cluster_config("kubelet", {{"pfs", nlohmann::json::array()}}, {});
  ASSERT_FALSE(unknown);
  EXPECT_THAT(unknown.error().message, HasSubstr("unknown target \"kubelet\" (valid: "));
  auto empty = render_cluster_config("sriov-device-plugin", {{"pfs", nlohmann::json::array()}}, {});
  ASSERT_FALSE(empty);
  EXPECT_THAT(empty.error().message, HasSubstr("no configured PF with a name"));
}

TEST(AClusterConfig, GivesEthernetVfsAResourceOfTheirOwnAndAnEthernetPolicy) {
  auto eth = pf("enp1s0", nullptr, "10c9", 7);
  eth["vendor"] = "8086";
  eth["vf_device"] = "10ca";
  eth["link_layer"] = "Ethernet";
  auto ib = pf("ibs0", "ibs0", "1021", 8);
  ib["link_layer"] = "InfiniBand";
  const nlohmann::json status = {{"pfs", {ib, eth}}};
  auto dp = render_cluster_config("sriov-device-plugin", status, {});
  ASSERT_TRUE(dp) << dp.error().message;
  const auto j = nlohmann::json::parse(dp.value());
  ASSERT_EQ(j["resourceList"].size(), 2U);
  EXPECT_EQ(j["resourceList"][0]["selectors"][0]["pfNames"], nlohmann::json({"ibs0"}));
  const auto& e = j["resourceList"][1];
  EXPECT_EQ(e["resourceName"], "eth_vfs");
  EXPECT_EQ(e["selectors"][0]["pfNames"], nlohmann::json({"enp1s0"}));
  EXPECT_EQ(e["selectors"][0]["devices"], nlohmann::json({"10ca"}));
  EXPECT_EQ(e["selectors"][0]["linkTypes"], nlohmann::json({"ether"}));
  EXPECT_FALSE(e["selectors"][0].contains("isRdma"));
  auto policy = render_cluster_config("sriov-network-node-policy", status, {});
  ASSERT_TRUE(policy) << policy.error().message;
  EXPECT_THAT(policy.value(), HasSubstr("name: \"vfready-eth-10c9\""));
  EXPECT_THAT(policy.value(), HasSubstr("linkType: eth\n"));
  EXPECT_THAT(policy.value(), HasSubstr("name: \"vfready-ib-1021\""));
  // The RDMA shared device plugin shares InfiniBand HCAs: the NIC is not in it.
  auto shared = render_cluster_config("rdma-shared-device-plugin", status, {});
  ASSERT_TRUE(shared);
  EXPECT_THAT(shared.value(), testing::Not(HasSubstr("enp1s0")));
}
