// SPDX-License-Identifier: Apache-2.0
// The topology parser: pure, no root needed.
#include "topology.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fake_host.hpp"

using namespace vfready::fakehost;
using testing::HasSubstr;

TEST(ATopology, ReadsTheReferenceHost) {
  auto t = load_topology(vfready::testing::reference_topology_path());
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->name, "dgx-h200");
  EXPECT_EQ(t->functions.size(), 12u);
  const auto& pf = t->functions.front();
  EXPECT_EQ(pf.pci.str(), "0000:18:00.0");
  EXPECT_EQ(pf.sriov->totalvfs, 16);
  EXPECT_EQ(pf.infiniband->node_guid.sysfs_str(), "a088:c203:0030:1000");
  EXPECT_EQ(pf.vf_address(0)->str(), "0000:18:00.1");
  EXPECT_EQ(pf.vf_address(7)->str(), "0000:18:01.0");
  EXPECT_FALSE(t->modules.at("ib_core").has_value());
}

struct BadTopology {
  const char* name;
  std::function<void(nlohmann::json&)> edit;
  const char* message;
  friend void PrintTo(const BadTopology& b, std::ostream* os) { *os << b.name; }
};

class ATopologyRejects : public testing::TestWithParam<BadTopology> {};

TEST_P(ATopologyRejects, NamingTheFileAndJsonPath) {
  auto j = vfready::testing::reference_topology();
  GetParam().edit(j);
  auto t = parse_topology(j.dump(), "host.json");
  ASSERT_FALSE(t);
  EXPECT_THAT(t.error().message, testing::StartsWith("host.json: $"));
  EXPECT_THAT(t.error().message, HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    BadInput, ATopologyRejects,
    testing::Values(
        BadTopology{"UnknownTopKey", [](auto& j) { j["kernal"] = 1; }, "$.kernal: unknown key"},
        BadTopology{"UnknownFault",
                    [](auto& j) {
                      j["functions"][0]["faults"] = {{"probe_fails", {1}}};
                    },
                    "$.functions[0].faults.probe_fails: unknown key"},
        BadTopology{"BadPci", [](auto& j) { j["functions"][1]["pci"] = "18:00"; },
                    "$.functions[1].pci: invalid PCI address"},
        BadTopology{"MissingDevice", [](auto& j) { j["functions"][0].erase("device"); },
                    "$.functions[0].device: is required"},
        BadTopology{"BadGuid",
                    [](auto& j) { j["functions"][0]["infiniband"]["node_guid"] = "a088"; },
                    "$.functions[0].infiniband.node_guid: invalid GUID"},
        BadTopology{"DuplicatePci",
                    [](auto& j) { j["functions"][1]["pci"] = j["functions"][0]["pci"]; },
                    "$.functions[1].pci: PCI address 0000:18:00.0 appears twice"},
        BadTopology{
            "VfOverlapsFunction", [](auto& j) { j["functions"][1]["pci"] = "0000:18:00.3"; },
            "$.functions: VF 2 of 0000:18:00.0 would be 0000:18:00.3, which is another function"},
        BadTopology{"VfOverlapsAnotherPfsVf",
                    [](auto& j) {
                      j["functions"][1]["pci"] = "0000:17:00.0";
                      j["functions"][1]["sriov"]["first_vf_offset"] = 0x105;
                    },
                    "$.functions: VF 0 of 0000:17:00.0 would be 0000:18:00.5, which is also VF 4 "
                    "of 0000:18:00.0"},
        BadTopology{
            "BadLinkLayer",
            [](auto& j) { j["functions"][0]["infiniband"]["ports"][0]["link_layer"] = "IB"; },
            "$.functions[0].infiniband.ports[0].link_layer: must be InfiniBand, Ethernet or "
            "Unknown"},
        BadTopology{"NegativeProbe",
                    [](auto& j) { j["functions"][0]["sriov"]["vf_probe_ms"] = -1; },
                    "vf_probe_ms: must be an integer from 0 to 600000"}),
    [](const testing::TestParamInfo<BadTopology>& info) { return info.param.name; });

TEST(ATopology, RejectsTextThatIsNotJson) {
  auto t = parse_topology("{ \"functions\": [", "broken.json");
  ASSERT_FALSE(t);
  EXPECT_THAT(t.error().message, HasSubstr("broken.json: not valid JSON"));
}
