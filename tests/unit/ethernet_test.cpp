// SPDX-License-Identifier: Apache-2.0
// Ethernet entries of any vendor: their configuration, plan (MACs) and hardware checks,
// on an observed host with two Intel 82576 (igb) PFs as a real kernel shows them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "host_builder.hpp"
#include "vfready/model/checks.hpp"
#include "vfready/model/config.hpp"
#include "vfready/model/config_generator.hpp"
#include "vfready/model/plan.hpp"

using testing::HasSubstr;
using namespace vfready::model;

namespace {

// igb's PFs as the host read finds them: no RDMA device, an Ethernet netdev with its
// burned-in MAC, VFs of 8086:10ca that modules.alias gives to igbvf.
PfInfo igb_pf(const std::string& pci, const std::string& netdev, const std::string& mac) {
  PfInfo pf;
  pf.pci = PciAddress::parse(pci).value();
  pf.vendor = 0x8086;
  pf.device = 0x10c9;
  pf.vf_device = 0x10ca;
  pf.driver = "igb";
  pf.vf_driver = "igbvf";
  pf.vf_driver_loaded = true;
  pf.netdev = netdev;
  pf.ifindex = 2;
  pf.netdev_type = 1;
  pf.permanent_mac = Mac::parse(mac).value();
  pf.sriov = true;
  pf.totalvfs = 7;
  pf.first_vf_offset = 128;
  pf.vf_stride = 2;
  return pf;
}

HostInfo igb_host() {
  HostInfo h;
  h.kernel_release = "6.12.118+deb12-amd64";
  h.modules = {{"igb", {}}};
  h.functions = {igb_pf("0000:01:00.0", "enp1s0", "52:54:00:00:00:01"),
                 igb_pf("0000:02:00.0", "enp2s0", "52:54:00:00:00:02")};
  return h;
}

vfready::Result<Config> parse(const std::string& json) {
  return parse_config({{"vfready.json", json}});
}

}  // namespace

TEST(AnEthernetEntry, TakesMacsAndVfSettingsAndRefusesWhatIsNotAnEthernetVfs) {
  auto c = parse(R"({"pfs": [{"select": {"pci": "0000:01:00.0"}, "link_layer": "Ethernet",
    "vfs": 2, "mac": {"scheme": "explicit", "macs": ["02:00:00:00:00:01", "02:00:00:00:00:02"]},
    "vlan": 10, "qos": 3, "trust": true, "spoofchk": false, "link_state": "enable"}]})");
  ASSERT_TRUE(c) << c.error().message;
  const auto& pf = c->pfs.at(0);
  EXPECT_EQ(pf.mac.scheme, MacScheme::kExplicit);
  EXPECT_EQ(pf.mac.macs.at(1).str(), "02:00:00:00:00:02");
  EXPECT_EQ(pf.vf_port.vlan, 10);
  EXPECT_EQ(pf.vf_port.qos, 3);
  EXPECT_EQ(pf.vf_port.trust, true);
  EXPECT_EQ(pf.vf_port.spoofchk, false);
  EXPECT_EQ(pf.vf_port.link_state, VfLinkState::kEnable);
  // An all-Ethernet configuration requires no InfiniBand module.
  EXPECT_TRUE(c->required_modules.empty());

  const std::pair<const char*, const char*> bad[] = {
      {R"("guid": {"scheme": "derived"})", "$.pfs[0].guid: applies to InfiniBand VFs"},
      {R"("mac": {"scheme": "explicit", "macs": ["01:00:5e:00:00:01", "02:00:00:00:00:02"]})",
       "a group (multicast) address"},
      {R"("mac": {"scheme": "pool", "first": "02:00:00:00:00:09", "last": "02:00:00:00:00:01"})",
       "$.pfs[0].mac.last: is below \"first\""},
      {R"("mac": {"scheme": "derived", "first": "02:00:00:00:00:01"})",
       "applies to another scheme"},
      {R"("mac": {"scheme": "pool", "first": "02:ff:ff:ff:ff:f0", "last": "04:00:00:00:00:10"})",
       "a pool stays within one (02:..)"},
      {R"("vlan": 4095)", "$.pfs[0].vlan"},
      {R"("qos": 2)", "needs a \"vlan\""},
      {R"("link_state": "up")", "$.pfs[0].link_state"},
  };
  for (const auto& [keys, error] : bad) {
    const auto text = std::string(R"({"pfs": [{"select": {"pci": "0000:01:00.0"}, )") +
                      R"("link_layer": "Ethernet", "vfs": 2, )" + keys + "}]}";
    auto r = parse(text);
    ASSERT_FALSE(r) << keys;
    EXPECT_THAT(r.error().message, HasSubstr(error)) << keys;
  }
  auto ib = parse(R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 2, "trust": true}]})");
  ASSERT_FALSE(ib);
  EXPECT_THAT(ib.error().message, HasSubstr("$.pfs[0].trust: applies to Ethernet VFs"));
}

TEST(AnEthernetPlan, DerivesMacsFromTheBurnedInMacPoolsThemAndRefusesOneTwice) {
  auto c = parse(R"({"pfs": [
    {"select": {"pci": "0000:01:00.0"}, "link_layer": "Ethernet", "vfs": 7},
    {"select": {"pci": "0000:02:00.0"}, "link_layer": "Ethernet", "vfs": 7,
     "mac": {"scheme": "pool", "first": "02:00:00:00:01:00", "last": "02:00:00:00:01:ff"}}]})");
  ASSERT_TRUE(c) << c.error().message;
  auto plan = make_plan(c.value(), igb_host());
  ASSERT_TRUE(plan) << plan.error().message;
  const auto& derived = plan->pfs.at(0);
  EXPECT_TRUE(derived.problems.empty());
  EXPECT_EQ(derived.vf.at(3).mac->str(), "06:00:00:01:00:03");
  EXPECT_EQ(derived.vf.at(3).pci->str(), "0000:01:10.6");
  EXPECT_TRUE(derived.vf.at(3).guid.is_zero());
  EXPECT_EQ(plan->pfs.at(1).vf.at(6).mac->str(), "02:00:00:00:01:06");

  // A PF whose address is not its burned-in one cannot derive: a problem of that PF.
  auto host = igb_host();
  host.functions[0].permanent_mac.reset();
  auto plan2 = make_plan(c.value(), host);
  ASSERT_TRUE(plan2) << plan2.error().message;
  ASSERT_EQ(plan2->pfs.at(0).problems.size(), 1U);
  EXPECT_THAT(plan2->pfs.at(0).problems[0].text, HasSubstr("no burned-in MAC"));
  EXPECT_FALSE(plan2->pfs.at(0).vf.at(0).mac);

  // A pool that hands out a MAC the derived scheme gives another VF: refused.
  auto clash = parse(R"({"pfs": [
    {"select": {"pci": "0000:01:00.0"}, "link_layer": "Ethernet", "vfs": 7},
    {"select": {"pci": "0000:02:00.0"}, "link_layer": "Ethernet", "vfs": 7,
     "mac": {"scheme": "pool", "first": "06:00:00:01:00:05", "last": "06:00:00:01:00:ff"}}]})");
  ASSERT_TRUE(clash);
  auto refused = make_plan(clash.value(), igb_host());
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message, HasSubstr("MAC 06:00:00:01:00:05 of VF 0 of 0000:02:00.0 "
                                                 "is also the MAC of VF 5 of 0000:01:00.0"));
}

TEST(AnEthernetPfsCheck, FollowsItsOwnDriverAndNamesItsVfDriver) {
  auto c = parse(R"({"pfs": [{"select": {"pci": ["0000:01:00.0", "0000:02:00.0"]},
    "link_layer": "Ethernet", "vfs": 7}]})");
  ASSERT_TRUE(c);
  auto host = igb_host();
  host.functions[1].vf_driver.clear();
  host.functions[0].vf_driver_loaded = false;
  const auto plan = make_plan(c.value(), host).value();
  EXPECT_TRUE(check_driver(c.value(), CompatTable{}, host).ok());
  // Not loaded yet: udev loads it as the VFs appear, so a warning.
  const auto first =
      check_hardware(plan.pfs[0], host.find(plan.pfs[0].pci), c.value(), CompatTable{}, host);
  EXPECT_TRUE(first.ok());
  ASSERT_EQ(first.warnings.size(), 1U);
  EXPECT_THAT(first.warnings[0].text,
              HasSubstr("module igbvf, the driver of PF 0000:01:00.0's VFs"));
  // Unknown: nothing would take its VFs.
  const auto second =
      check_hardware(plan.pfs[1], host.find(plan.pfs[1].pci), c.value(), CompatTable{}, host);
  ASSERT_EQ(second.failures.size(), 1U);
  EXPECT_THAT(second.failures[0].text, HasSubstr("no module drives the VFs of PF 0000:02:00.0 "
                                                 "(PCI ID 8086:10ca)"));
  // Configured InfiniBand: the netdev's type tells, and no mlxconfig remedy for igb.
  auto ib = parse(R"({"pfs": [{"select": {"pci": "0000:01:00.0"}, "vfs": 7}]})");
  const auto ib_plan = make_plan(ib.value(), host).value();
  const auto wrong = check_hardware(ib_plan.pfs[0], host.find(ib_plan.pfs[0].pci), ib.value(),
                                    CompatTable{}, host);
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.failures[0].text, HasSubstr("PF 0000:01:00.0 is Ethernet, configured "
                                                "InfiniBand"));
  EXPECT_THAT(wrong.failures[0].text, testing::Not(HasSubstr("mlxconfig")));
}

TEST(AGeneratedConfig, ProposesEveryEthernetSriovPfOnAHostWithoutInfiniBand) {
  const auto host = igb_host();
  const auto g = generate_config(host, "/usr/share/vfready/vfready.schema.json");
  EXPECT_THAT(g.selected, testing::ElementsAre("0000:01:00.0", "0000:02:00.0"));
  const auto config = parse_config({{"generated.json", g.json}});
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->pfs.at(0).link_layer, LinkLayer::kEthernet);
  const auto plan = make_plan(config.value(), host);
  ASSERT_TRUE(plan) << plan.error().message;
  for (const auto& pf : plan->pfs) {
    EXPECT_TRUE(check_hardware(pf, host.find(pf.pci), config.value(), CompatTable{}, host).ok());
  }
}
