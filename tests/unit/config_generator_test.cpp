// SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "host_builder.hpp"
#include "vfready/model/config.hpp"
#include "vfready/model/config_generator.hpp"
#include "vfready/model/plan.hpp"

using namespace vfready::model;
using testing::ElementsAre;
using vfready::testing::dgx_host;

TEST(AGeneratedConfig, SelectsTheInfiniBandPfsByAddressOneEntryPerVfCountAndPlansOnItsHost) {
  auto host = dgx_host();
  host.functions[1].numvfs = 4;    // VFs it has now are kept
  host.functions[2].totalvfs = 2;  // fewer than 8 offered: all it offers
  host.functions[3].sriov = false;
  host.functions[4].driver = "vfio-pci";
  const auto g = generate_config(host, "/usr/share/vfready/vfready.schema.json");
  EXPECT_THAT(g.left_out,
              ElementsAre(testing::StartsWith("0000:5e:00.0: no SR-IOV (mlxconfig"),
                          "0000:9a:00.0: not bound to mlx5_core",
                          testing::StartsWith("0000:29:00.0: Ethernet beside InfiniBand PFs"),
                          testing::StartsWith("0000:29:00.1: Ethernet beside InfiniBand PFs"),
                          testing::StartsWith("0000:aa:00.0: Ethernet beside InfiniBand PFs"),
                          testing::StartsWith("0000:aa:00.1: Ethernet beside InfiniBand PFs")));
  const auto json = nlohmann::json::parse(g.json);
  EXPECT_EQ(json["$schema"], "/usr/share/vfready/vfready.schema.json");
  ASSERT_EQ(json["pfs"].size(), 3U);
  EXPECT_EQ(json["pfs"][0]["vfs"], 2);
  EXPECT_EQ(json["pfs"][0]["select"]["pci"], nlohmann::json({"0000:4f:00.0"}));
  EXPECT_EQ(json["pfs"][1]["vfs"], 4);
  EXPECT_EQ(json["pfs"][2]["vfs"], 8);
  EXPECT_EQ(json["pfs"][2]["select"]["pci"].size(), 4U);

  // The parser takes it, and the plan names the PFs across entries by PCI order.
  const auto config = parse_config({{"generated.json", g.json}});
  ASSERT_TRUE(config) << config.error().message;
  const auto plan = make_plan(config.value(), host);
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->pfs.size(), 6U);
  EXPECT_EQ(plan->pfs[0].name->str(), "ibs0");
  EXPECT_EQ(plan->pfs[2].pci.str(), "0000:4f:00.0");
  EXPECT_EQ(plan->pfs[2].name->str(), "ibs2");
  EXPECT_EQ(plan->pfs[2].vf[1].name->str(), "ibs2v1");
}
