// SPDX-License-Identifier: Apache-2.0
// read_host() on a sysfs laid out as files and links in a directory. A file that would
// be read through a device call (sriov_numvfs, a port's state) is a directory here, so
// a read of it fails and shows. No root needed.
#include "vfready/host/host_reader.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using vfready::model::PciAddress;

PciAddress pci(const char* text) { return PciAddress::parse(text).value(); }

class HostReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // An Ethernet storage NIC whose VFs 0 and 1 another writer has already removed
    // (sriov_del_vfs() removes from VF 0 up): its links name VFs 2 and 3.
    const auto pf = function("0000:29:00.0", "0x1021");
    put(pf + "/sriov_totalvfs", "8");
    put(pf + "/sriov_offset", "2");
    put(pf + "/sriov_stride", "1");
    fs::create_directories(pf + "/sriov_numvfs");  // read only through a device call
    put(pf + "/infiniband/mlx5_1/ports/1/link_layer", "Ethernet");
    fs::create_directories(pf + "/infiniband/mlx5_1/ports/1/state");  // the same
    fs::create_directories(pf + "/net/enp41s0f0np0");
    for (const auto& [index, vf] : {std::pair{2, "0000:29:00.4"}, {3, "0000:29:00.5"}}) {
      const auto dir = function(vf, "0x101e");
      fs::create_symlink("../0000:29:00.0", dir + "/physfn");
      fs::create_symlink("../" + std::string(vf), pf + "/virtfn" + std::to_string(index));
      put(dir + "/net/enp41s0v" + std::to_string(index) + "/ifindex", std::to_string(10 + index));
    }
  }
  // A function's directory under bus/pci/devices, with its vendor and device IDs.
  [[nodiscard]] std::string function(const std::string& address, const char* device) const {
    const auto dir = root_ + "/bus/pci/devices/" + address;
    put(dir + "/vendor", "0x15b3");
    put(dir + "/device", device);
    return dir;
  }
  static void put(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << text << "\n";
  }
  [[nodiscard]] vfready::model::HostInfo read(const vfready::model::Selectable* whole) const {
    vfready::host::RootedSysfs sysfs(root_);
    return vfready::host::read_host(sysfs, {root_ + "/proc", root_ + "/kmsg"}, whole);
  }

  vfready::testing::TempDir dir_{"vfready-host-reader"};
  const std::string& root_ = dir_.path();
};

TEST_F(HostReaderTest, ReadsAFunctionNoEntryCanSelectWithoutItsDeviceCalls) {
  const vfready::model::Selectable whole{{pci("0000:18:00.0")}, {}};
  const auto host = read(&whole);
  ASSERT_EQ(host.functions.size(), 1U) << "VFs are no functions";
  const auto& nic = host.functions.front();
  EXPECT_EQ(nic.device, 0x1021);
  EXPECT_EQ(nic.netdev, "enp41s0f0np0");
  EXPECT_EQ(nic.numvfs, 2) << "counted by its virtfn links, not read from sriov_numvfs";
  ASSERT_EQ(nic.vfs.size(), 2U);
  EXPECT_EQ(nic.vfs[0].index, 2);
  EXPECT_EQ(nic.vfs[0].pci, pci("0000:29:00.4"));
  EXPECT_EQ(nic.vfs[0].netdev, "enp41s0v2");
  EXPECT_EQ(nic.vfs[1].index, 3);
  EXPECT_EQ(nic.vfs[1].netdev, "enp41s0v3");
  ASSERT_EQ(nic.ports.size(), 1U);
  EXPECT_EQ(nic.ports[0].link_layer, "Ethernet");
  EXPECT_EQ(nic.ports[0].state, "");
  EXPECT_EQ(nic.ports[0].state_error, "") << "its state not read";
  EXPECT_FALSE(nic.stuck);
}

TEST_F(HostReaderTest, ReadsAFunctionAnEntrySelectsByDeviceWithItsDeviceCalls) {
  const vfready::model::Selectable by_device{{}, {0x1021}};
  const auto host = read(&by_device);
  ASSERT_EQ(host.functions.size(), 1U);
  const auto& nic = host.functions.front();
  EXPECT_EQ(nic.numvfs, 0) << "sriov_numvfs read (and unreadable here)";
  EXPECT_TRUE(nic.vfs.empty());
  ASSERT_EQ(nic.ports.size(), 1U);
  EXPECT_NE(nic.ports[0].state_error, "") << "its state read (and unreadable here)";
  // The same without a selection: every function whole.
  const auto all = read(nullptr);
  ASSERT_EQ(all.functions.size(), 1U);
  EXPECT_NE(all.functions.front().ports[0].state_error, "");
}

TEST_F(HostReaderTest, FindsASoftwareRdmaDeviceOverAFunctionsNetdevAndNoOtherOnes) {
  // An igb PF with no RDMA device of its own; rdma_rxe made rxe0 over its netdev and rxe1
  // over another (the kernel's class/infiniband links are directories here).
  const auto pf = function("0000:01:00.0", "0x10c9");
  put(pf + "/net/enp1s0/ifindex", "2");
  const auto rxe = [&](const std::string& name, const std::string& netdev) {
    const auto dir = root_ + "/class/infiniband/" + name + "/ports/1/";
    put(dir + "gid_attrs/ndevs/0", netdev);
    put(dir + "link_layer", "Ethernet");
  };
  rxe("rxe1", "enp2s0");
  rxe("rxe0", "enp1s0");
  const vfready::model::Selectable whole{{pci("0000:01:00.0")}, {}};
  const auto host = read(&whole);
  const auto igb = std::find_if(host.functions.begin(), host.functions.end(),
                                [](const auto& f) { return f.pci == pci("0000:01:00.0"); });
  ASSERT_NE(igb, host.functions.end());
  EXPECT_EQ(igb->ib_device, "rxe0");
  EXPECT_TRUE(igb->rdma_over_netdev);
  ASSERT_EQ(igb->ports.size(), 1U);
  EXPECT_EQ(igb->ports[0].link_layer, "Ethernet");
  // The ConnectX's own device, under its function, is not taken for one over its netdev.
  const auto cx = std::find_if(host.functions.begin(), host.functions.end(),
                               [](const auto& f) { return f.pci == pci("0000:29:00.0"); });
  ASSERT_NE(cx, host.functions.end());
  EXPECT_EQ(cx->ib_device, "mlx5_1");
  EXPECT_FALSE(cx->rdma_over_netdev);
}

}  // namespace
