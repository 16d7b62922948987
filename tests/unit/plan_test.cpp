// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/plan.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "host_builder.hpp"

using testing::HasSubstr;
using namespace vfready::model;
using vfready::testing::dgx_host;

namespace {

Config config(const std::string& json) {
  auto c = parse_config({{"vfready.json", json}});
  EXPECT_TRUE(c) << c.error().message;
  return c.value();
}

const char* kByDevice = R"({"pfs": [{"select": {"device": "0x1021", "link_layer": "InfiniBand"},
  "vfs": 8, "pf_name": "ibs{pf_index}", "vf_name": "ibs{pf_index}v{vf}",
  "pf_altnames": ["ib-{pci}"], "vf_altnames": ["ib-{vf_pci}"], "mtu": 4092}]})";

}  // namespace

TEST(APlan, SelectsTheInfinibandPfsInPciOrderAndNamesThem) {
  auto plan = make_plan(config(kByDevice), dgx_host());
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->pfs.size(), 8u);
  const auto& first = plan->pfs.front();
  EXPECT_EQ(first.pci.str(), "0000:18:00.0");
  EXPECT_EQ(first.name->str(), "ibs0");
  EXPECT_EQ(first.altnames.at(0).str(), "ib-0000-18-00.0");
  ASSERT_EQ(first.vf.size(), 8u);
  EXPECT_EQ(first.vf[3].name->str(), "ibs0v3");
  EXPECT_EQ(first.vf[3].pci->str(), "0000:18:00.4");
  EXPECT_EQ(first.vf[3].altnames.at(0).str(), "ib-0000-18-00.4");
  EXPECT_EQ(first.vf[3].mtu, 4092u);
  EXPECT_EQ(plan->pfs.back().pci.str(), "0000:dc:00.0");
  EXPECT_EQ(plan->pfs.back().name->str(), "ibs7");
  EXPECT_TRUE(first.problems.empty());
}

TEST(APlan, GivesEveryVfADistinctAssignableGuid) {
  auto plan = make_plan(config(kByDevice), dgx_host());
  ASSERT_TRUE(plan) << plan.error().message;
  std::set<Guid> guids;
  for (const auto& pf : plan->pfs) {
    for (const auto& vf : pf.vf) {
      EXPECT_TRUE(vf.guid.is_assignable());
      EXPECT_TRUE(guids.insert(vf.guid).second) << vf.guid.str();
    }
  }
  EXPECT_EQ(guids.size(), 64u);
}

TEST(APlan, MarksAConfiguredPfThatIsAbsentWithoutFailingTheRest) {
  auto plan = make_plan(
      config(R"({"pfs": [{"select": {"pci": ["0000:18:00.0", "0000:77:00.0"]}, "vfs": 2}]})"),
      dgx_host());
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->pfs.size(), 2u);
  EXPECT_TRUE(plan->pfs[0].present);
  EXPECT_FALSE(plan->pfs[1].present);
  EXPECT_EQ(plan->pfs[1].problems.at(0).kind, EventKind::kPfMissing);
  EXPECT_THAT(plan->pfs[1].problems.at(0).text, HasSubstr("0000:77:00.0 is not on this host"));
}

TEST(APlan, RejectsANameTooLongNamingTheTemplateAndThePf) {
  auto plan = make_plan(config(R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 2,
                 "vf_name": "infinibandport{pf_index}vf{vf}"}]})"),
                        dgx_host());
  ASSERT_FALSE(plan);
  EXPECT_THAT(plan.error().message, HasSubstr("vfready.json: $.pfs[0].vf_name: template"));
  EXPECT_THAT(plan.error().message, HasSubstr("\"infinibandport0vf0\""));
  EXPECT_THAT(plan.error().message, HasSubstr("VF 0 of 0000:18:00.0"));
}

TEST(APlan, RejectsANameTooLongForVf10Only) {
  auto plan = make_plan(config(R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 11,
                 "vf_name": "infiniband00vf{vf}"}]})"),
                        dgx_host());
  ASSERT_FALSE(plan);
  EXPECT_THAT(plan.error().message, HasSubstr("16 bytes, at most 15"));
  EXPECT_THAT(plan.error().message, HasSubstr("VF 10 of 0000:18:00.0"));
}

TEST(APlan, RejectsTwoDevicesWithOneName) {
  auto plan = make_plan(config(R"({"pfs": [
      {"select": {"pci": "0000:18:00.0"}, "vfs": 1, "vf_name": "gpu0ib{vf}"},
      {"select": {"pci": "0000:40:00.0"}, "vfs": 1, "vf_name": "gpu0ib{vf}"}]})"),
                        dgx_host());
  ASSERT_FALSE(plan);
  EXPECT_THAT(plan.error().message, HasSubstr("$.pfs[1]: name \"gpu0ib0\" of VF 0 of 0000:40:00.0 "
                                              "is also the name of VF 0 of 0000:18:00.0"));
}

TEST(APlan, RejectsAnAltnameWithAColon) {
  auto plan = make_plan(config(R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 1,
                 "vf_altnames": ["vf:{vf}"]}]})"),
                        dgx_host());
  ASSERT_FALSE(plan);
  EXPECT_THAT(plan.error().message, HasSubstr("$.pfs[0].vf_altnames[0]: template \"vf:{vf}\""));
}

TEST(APlan, HandsOutPoolGuidsInBlocksPerPfAndChecksThePoolSize) {
  auto plan = make_plan(config(R"({"pfs": [{"select": {"device": "0x1021",
      "link_layer": "InfiniBand"}, "vfs": 4, "guid": {"scheme": "pool",
      "first": "0a:00:00:00:00:00:01:00", "last": "0a:00:00:00:00:00:01:ff"}}]})"),
                        dgx_host());
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->pfs[0].vf[0].guid.str(), "0a:00:00:00:00:00:01:00");
  EXPECT_EQ(plan->pfs[1].vf[2].guid.str(), "0a:00:00:00:00:00:01:06");
  auto small = make_plan(config(R"({"pfs": [{"select": {"device": "0x1021",
      "link_layer": "InfiniBand"}, "vfs": 4, "guid": {"scheme": "pool",
      "first": "0a:00:00:00:00:00:01:00", "last": "0a:00:00:00:00:00:01:0f"}}]})"),
                         dgx_host());
  ASSERT_FALSE(small);
  EXPECT_THAT(small.error().message, HasSubstr("has too few GUIDs for VF 0 of 0000:9a:00.0"));
}

TEST(APlan, RejectsAGuidGivenTwice) {
  auto plan = make_plan(config(R"({"pfs": [
      {"select": {"pci": "0000:18:00.0"}, "vfs": 1,
       "guid": {"scheme": "explicit", "guids": ["0a:00:00:00:00:00:00:01"]}},
      {"select": {"pci": "0000:40:00.0"}, "vfs": 1,
       "guid": {"scheme": "explicit", "guids": ["0a:00:00:00:00:00:00:01"]}}]})"),
                        dgx_host());
  ASSERT_FALSE(plan);
  EXPECT_THAT(plan.error().message, HasSubstr("$.pfs[1].guid: GUID 0a:00:00:00:00:00:00:01"));
}

TEST(APlan, ReportsAPfWithoutNodeGuidUnderTheDerivedScheme) {
  auto host = dgx_host();
  host.functions[0].node_guid.reset();
  auto plan =
      make_plan(config(R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 2}]})"), host);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_THAT(plan->pfs[0].problems.at(0).text, HasSubstr("has no readable InfiniBand node GUID"));
}

TEST(APlan, RefusesAZeroNodeGuidUnderTheDerivedScheme) {
  auto host = dgx_host();
  host.functions[0].node_guid = Guid{0};
  auto plan =
      make_plan(config(R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 2}]})"), host);
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->pfs[0].problems.size(), 1u);
  EXPECT_THAT(plan->pfs[0].problems[0].text, HasSubstr("has node GUID " + Guid{0}.str()));
}

TEST(APlan, RefusesAPfSelectedByTwoEntriesNamingBoth) {
  auto plan = make_plan(config(R"({"pfs": [
      {"select": {"pci": "0000:40:00.0"}, "vfs": 2},
      {"select": {"device": "0x1021"}, "vfs": 4}]})"),
                        dgx_host());
  ASSERT_FALSE(plan);
  EXPECT_THAT(plan.error().message,
              HasSubstr("$.pfs[1].select: PF 0000:40:00.0 is selected here and by vfready.json "
                        "($.pfs[0])"));
}

TEST(APlan, RefusesADeviceSelectorThatFindsNothingUnlessOptional) {
  const std::string entry = R"("select": {"device": "0x1017"}, "vfs": 2)";
  auto plan = make_plan(config(R"({"pfs": [{)" + entry + "}]}"), dgx_host());
  ASSERT_FALSE(plan);
  EXPECT_THAT(plan.error().message,
              HasSubstr("$.pfs[0].select: no PF on this host is a 0x1017 with link layer "
                        "InfiniBand"));
  plan = make_plan(config(R"({"pfs": [{)" + entry + R"(, "optional": true}]})"), dgx_host());
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_TRUE(plan->pfs.empty());
}

TEST(APlan, SkipsAnAbsentAddressOfAnOptionalEntryOnly) {
  auto plan =
      make_plan(config(R"({"pfs": [{"select": {"pci": ["0000:18:00.0", "0000:77:00.0"]}, "vfs": 2,
                 "optional": true}]})"),
                dgx_host());
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->pfs.size(), 1u);
  EXPECT_EQ(plan->pfs[0].pci.str(), "0000:18:00.0");
}

TEST(APlan, KeepsADeviceSelectorToTheEntrysLinkLayerAndSaysWhatItLeftOut) {
  auto plan =
      make_plan(config(R"({"pfs": [{"select": {"device": "0x1021"}, "vfs": 2}]})"), dgx_host());
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->pfs.size(), 8u);  // not the four Ethernet functions of the same ID
  ASSERT_EQ(plan->warnings.size(), 4u);
  EXPECT_EQ(plan->warnings[0].kind, EventKind::kLinkLayerMismatch);
  EXPECT_THAT(plan->warnings[0].text,
              HasSubstr("PF 0000:29:00.0 (device 0x1021) is not selected by vfready.json "
                        "($.pfs[0]): its link layer is Ethernet, not InfiniBand"));
}

TEST(ASelectable, HoldsTheAddressesAndDevicesEntriesSelectBy) {
  const auto whole = selectable(config(R"({"pfs": [
      {"select": {"pci": ["0000:18:00.0", "0000:40:00.0"]}, "vfs": 2},
      {"select": {"device": "0x1021", "link_layer": "Ethernet"}, "vfs": 1}]})"));
  EXPECT_TRUE(whole.by_address(PciAddress::parse("0000:40:00.0").value()));
  EXPECT_FALSE(whole.by_address(PciAddress::parse("0000:29:00.0").value()));
  EXPECT_TRUE(whole.by_device(0x1021));
  EXPECT_FALSE(whole.by_device(0x101e));
  EXPECT_FALSE(selectable(config(R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 2}]})"))
                   .by_device(0x1021));
}

TEST(APlan, RefusesANameHeldByANetdevItDoesNotManage) {
  auto host = dgx_host();
  host.functions[8].netdev = "ens5f0";  // 0000:29:00.0, a storage NIC
  auto plan = make_plan(
      config(R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 2, "pf_name": "ens5f0"}]})"),
      host);
  ASSERT_FALSE(plan);
  EXPECT_THAT(plan.error().message,
              HasSubstr("name \"ens5f0\" of PF 0000:18:00.0 is also the name of the netdev of "
                        "0000:29:00.0, which vfready does not manage"));
}

TEST(APlan, RefusesTheKernelNameOfAPfThatKeepsItAsAnotherName) {
  auto plan = make_plan(config(R"({"pfs": [
      {"select": {"pci": "0000:18:00.0"}, "vfs": 2},
      {"select": {"pci": "0000:40:00.0"}, "vfs": 2, "vf_name": "ibp24s{vf}"}]})"),
                        dgx_host());
  ASSERT_FALSE(plan);
  EXPECT_THAT(plan.error().message,
              HasSubstr("is also the name of PF 0000:18:00.0 (its kernel name, kept)"));
}

TEST(APlan, SaysWhenAConfiguredAddressIsAVf) {
  auto host = dgx_host();
  VfInfo vf;
  vf.index = 3;
  vf.pci = PciAddress::parse("0000:18:00.4").value();
  host.functions[0].vfs.push_back(vf);
  auto plan =
      make_plan(config(R"({"pfs": [{"select": {"pci": "0000:18:00.4"}, "vfs": 2}]})"), host);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_THAT(plan->pfs[0].problems.at(0).text,
              HasSubstr("PF 0000:18:00.4 is VF 3 of PF 0000:18:00.0, not a PF"));
}
