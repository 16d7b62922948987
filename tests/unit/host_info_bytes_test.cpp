// SPDX-License-Identifier: Apache-2.0
// The host as read, as the host's reader process hands it over: every field comes back,
// and bytes cut short, of another format or with a count larger than they hold are an
// error, never a host.
#include "vfready/model/host_info_bytes.hpp"

#include "gtest/gtest.h"

namespace {

using namespace vfready::model;

HostInfo a_host() {
  HostInfo host;
  host.kernel_release = "6.12.0-1-amd64";
  host.modules = {{"mlx5_core", "24.10-1.1.4"}, {"igb", std::nullopt}};
  host.kernel_log = {"mlx5_core 0000:18:00.0: firmware version: 28.39.1002", ""};
  PfInfo pf;
  pf.pci = PciAddress::parse("0000:18:00.0").value();
  pf.vendor = 0x15b3;
  pf.device = 0x1021;
  pf.vf_device = 0x101e;
  pf.driver = "mlx5_core";
  pf.vf_driver = "mlx5_core";
  pf.vf_driver_loaded = true;
  pf.numa_node = 1;
  pf.netdev = "ibs0";
  pf.ifindex = 7;
  pf.netdev_type = 32;
  pf.permanent_mac = Mac::parse("02:aa:bb:cc:dd:01").value();
  pf.sriov = true;
  pf.totalvfs = 127;
  pf.numvfs = 2;
  pf.first_vf_offset = 4;
  pf.vf_stride = 2;
  pf.autoprobe = false;
  pf.ib_device = "mlx5_0";
  pf.rdma_over_netdev = true;
  pf.firmware = Version::parse("28.39.1002").value();
  pf.firmware_text = "28.39.1002 (MT_0000000838)";
  pf.node_guid = Guid(0x0c42a10300aabb01);
  pf.ofed_sriov = true;
  pf.ports = {{"InfiniBand", "4: ACTIVE", "5: LinkUp", "", false},
              {"Ethernet", "", "", "Input/output error (EIO)", true}};
  VfInfo vf;
  vf.index = 1;
  vf.pci = PciAddress::parse("0000:18:00.6").value();
  vf.driver = "mlx5_core";
  vf.netdev = "ibs0v1";
  vf.ifindex = 9;
  vf.node_guid = Guid(1);
  vf.effective_guid = Guid(~uint64_t{0});
  vf.mac = Mac::parse("02:00:00:00:00:02").value();
  pf.vfs = {VfInfo{}, vf};
  pf.stuck = "write 8 to sriov_numvfs";
  host.functions = {pf, PfInfo{}};
  return host;
}

TEST(HostInfoBytes, GiveBackEveryField) {
  const auto host = a_host();
  const auto bytes = encode_host(host);
  const auto back = decode_host(bytes);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(encode_host(back.value()), bytes);
  const auto& pf = back->functions.at(0);
  EXPECT_EQ(back->kernel_release, host.kernel_release);
  EXPECT_EQ(back->modules, host.modules);
  EXPECT_EQ(back->kernel_log, host.kernel_log);
  EXPECT_EQ(pf.pci.str(), "0000:18:00.0");
  EXPECT_EQ(pf.permanent_mac->str(), "02:aa:bb:cc:dd:01");
  EXPECT_EQ(pf.firmware->str(), "28.39.1002");
  EXPECT_EQ(pf.node_guid->value(), 0x0c42a10300aabb01U);
  EXPECT_EQ(pf.ports.at(1).state_error, "Input/output error (EIO)");
  EXPECT_TRUE(pf.ports.at(1).state_unread);
  EXPECT_EQ(pf.vfs.at(1).pci.str(), "0000:18:00.6");
  EXPECT_EQ(pf.vfs.at(1).effective_guid->value(), ~uint64_t{0});
  EXPECT_EQ(pf.vfs.at(1).mac->str(), "02:00:00:00:00:02");
  EXPECT_FALSE(pf.vfs.at(0).mac);
  EXPECT_EQ(pf.stuck, host.functions[0].stuck);
  EXPECT_FALSE(pf.autoprobe);
  EXPECT_TRUE(pf.rdma_over_netdev);
  EXPECT_EQ(back->functions.at(1).pci.str(), PfInfo{}.pci.str());
}

// The least an item takes is what a count read is held to: a PF last in PCI order with
// a VF that has nothing but its address (no driver after a crash mid-pass) decodes.
TEST(HostInfoBytes, TakeBackAHostWhoseLastPfHasBareVfsAndPorts) {
  HostInfo host;
  PfInfo pf;
  pf.vfs = {VfInfo{}, VfInfo{}};
  pf.ports = {PortInfo{}};
  host.functions = {pf};
  const auto bytes = encode_host(host);
  const auto back = decode_host(bytes);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->functions.at(0).vfs.size(), 2U);
  EXPECT_EQ(back->functions.at(0).ports.size(), 1U);
  EXPECT_EQ(encode_host(back.value()), bytes);
}

TEST(HostInfoBytes, CutShortOrOfAnotherFormatAreAnError) {
  const auto bytes = encode_host(a_host());
  for (std::size_t cut = 0; cut < bytes.size(); cut += 7) {
    EXPECT_FALSE(decode_host(std::string_view(bytes).substr(0, cut))) << "cut at " << cut;
  }
  EXPECT_FALSE(decode_host(bytes + "x"));
  auto other = bytes;
  other[0] = 9;
  const auto refused = decode_host(other);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("format 9"), std::string::npos);
  // A count of a billion functions in a few bytes is refused before anything is made.
  auto huge = encode_host(HostInfo{});
  huge.replace(huge.size() - 4, 4, std::string("\xff\xff\xff\x3f", 4));
  EXPECT_FALSE(decode_host(huge));
}

}  // namespace
