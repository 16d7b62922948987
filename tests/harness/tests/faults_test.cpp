// SPDX-License-Identifier: Apache-2.0
// Every fault a topology can name, observed with a shell client.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include "fake_host.hpp"
#include "process.hpp"
#include "root_only.hpp"

using namespace vfready::testing;
using testing::Contains;
using testing::HasSubstr;
using testing::MatchesRegex;
using testing::Not;

namespace {
constexpr const char* kPf = "0000:18:00.0";
}

TEST(AFakeHostFault, ProbeFailVfsAppearOnPciButGetNoNetdev) {
  VFREADY_REQUIRE_ROOT();
  auto topo = TopologyBuilder::reference().probe_ms(1);
  topo.function(kPf)["faults"] = {{"probe_fail_vfs", {1}}};
  FakeHost host(topo);
  ASSERT_EQ(sh("echo 3 > " + host.pci(kPf, "sriov_numvfs")).exit_code, 0);
  EXPECT_TRUE(exists(host.pci(kPf, "virtfn1")));
  EXPECT_FALSE(exists(host.pci("0000:18:00.2", "net")));
  EXPECT_FALSE(exists(host.pci("0000:18:00.2", "driver")));
  EXPECT_TRUE(host.has_link("ibp24s0v0"));
  EXPECT_TRUE(host.has_link("ibp24s0v2"));
  EXPECT_THAT(host.links(), Not(Contains("ibp24s0v1")));
  EXPECT_THAT(host.kernel_log(), Contains(HasSubstr("probe of 0000:18:00.2 failed with error -5")));
}

// drivers_probe_store() reports no probe's result; bind_store() returns the probe's
// error since 5.14 (ef6dcbdd8eb2, "Flow the return code from ->probe() through to sysfs
// bind"). The kernel log line is there either way.
TEST(AFakeHostFault, AFailedProbeIsSilentThroughDriversProbeAndAnErrorThroughBind) {
  VFREADY_REQUIRE_ROOT();
  auto topo = TopologyBuilder::reference().probe_ms(1);
  topo.function(kPf)["faults"] = {{"probe_fail_vfs", {1}}};
  FakeHost host(topo);
  ASSERT_EQ(sh("echo 0 > " + host.pci(kPf, "sriov_drivers_autoprobe")).exit_code, 0);
  ASSERT_EQ(sh("echo 2 > " + host.pci(kPf, "sriov_numvfs")).exit_code, 0);
  ASSERT_EQ(sh("echo 1 > " + host.pci(kPf, "sriov_drivers_autoprobe")).exit_code, 0);
  const auto probe = sh("echo 0000:18:00.2 > " + host.sys("bus/pci/drivers_probe"));
  EXPECT_EQ(probe.exit_code, 0) << probe.err;
  EXPECT_FALSE(exists(host.pci("0000:18:00.2", "driver")));
  const auto bind = sh("echo 0000:18:00.2 > " + host.sys("bus/pci/drivers/mlx5_core/bind"));
  EXPECT_THAT(bind.err, HasSubstr("Input/output error"));
  EXPECT_FALSE(exists(host.pci("0000:18:00.2", "driver")));
  EXPECT_THAT(host.writes(), Contains(HasSubstr("drivers_probe 0000:18:00.2 0")));
  EXPECT_THAT(host.writes(), Contains(HasSubstr("mlx5_core/bind 0000:18:00.2 5")));
  std::size_t lines = 0;
  for (const auto& line : host.kernel_log()) {
    lines += line.find("probe of 0000:18:00.2 failed with error -5") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(lines, 2u) << "one line a probe";
}

TEST(AFakeHostFault, NumvfsErrnoFailsEveryWriteWithIt) {
  VFREADY_REQUIRE_ROOT();
  auto topo = TopologyBuilder::reference();
  topo.function(kPf)["faults"] = {{"numvfs_errno", "EIO"}};
  FakeHost host(topo);
  EXPECT_THAT(sh("echo 2 > " + host.pci(kPf, "sriov_numvfs")).err, HasSubstr("Input/output error"));
  EXPECT_EQ(read_file(host.pci(kPf, "sriov_numvfs")), "0\n");
  EXPECT_THAT(host.writes(), Contains(HasSubstr("sriov_numvfs 2 5")));
}

TEST(AFakeHostFault, NumvfsWriteHangsUntilTeardown) {
  VFREADY_REQUIRE_ROOT();
  auto topo = TopologyBuilder::reference().probe_ms(1);
  topo.function(kPf)["faults"] = {{"numvfs_write_hangs", true}};
  FakeHost host(topo);
  Background writer("echo 2 > " + host.pci(kPf, "sriov_numvfs"));
  // A healthy write of 2 VFs takes 2 ms; this one is still blocked 100x later.
  EXPECT_TRUE(writer.wait(200ms).timed_out);
  EXPECT_EQ(read_file(host.pci("0000:40:00.0", "sriov_totalvfs")), "16\n")
      << "the rest of the host still answers";
  EXPECT_EQ(host.stop(), 0);
  auto done = writer.wait(10s);
  EXPECT_FALSE(done.timed_out);
  EXPECT_NE(done.exit_code, 0);
}

// sriov_drivers_autoprobe_store() (drivers/pci/iov.c) sets a flag of the PF and takes no
// lock: it answers while the PF's sriov_numvfs write holds the device lock.
TEST(AFakeHostFault, AutoprobeIsWrittenWhileASriovNumvfsWriteHangs) {
  VFREADY_REQUIRE_ROOT();
  auto topo = TopologyBuilder::reference().probe_ms(1);
  topo.function(kPf)["faults"] = {{"numvfs_write_hangs", true}};
  FakeHost host(topo);
  ASSERT_EQ(sh("echo 0 > " + host.pci(kPf, "sriov_drivers_autoprobe")).exit_code, 0);
  Background writer("echo 2 > " + host.pci(kPf, "sriov_numvfs"));
  ASSERT_TRUE(writer.wait(200ms).timed_out) << "the write hangs";
  const auto on = sh("echo 1 > " + host.pci(kPf, "sriov_drivers_autoprobe"), 5s);
  EXPECT_FALSE(on.timed_out);
  EXPECT_EQ(on.exit_code, 0) << on.err;
  EXPECT_EQ(read_file(host.pci(kPf, "sriov_drivers_autoprobe")), "1\n");
  EXPECT_EQ(host.stop(), 0);
  EXPECT_FALSE(writer.wait(10s).timed_out);
}

// state_show() and phys_state_show() return ib_query_port()'s error; link_layer asks no
// firmware and still reads.
TEST(AFakeHostFault, PortStateErrnoFailsReadsOfTheStatesOnly) {
  VFREADY_REQUIRE_ROOT();
  auto topo = TopologyBuilder::reference();
  topo.function(kPf)["faults"] = {{"port_state_errno", "EIO"}};
  FakeHost host(topo);
  const auto port = host.sys("class/infiniband/mlx5_0/ports/1/");
  EXPECT_THAT(sh("cat " + port + "state").err, HasSubstr("Input/output error"));
  EXPECT_THAT(sh("cat " + port + "phys_state").err, HasSubstr("Input/output error"));
  EXPECT_EQ(read_file(port + "link_layer"), "InfiniBand\n");
  EXPECT_EQ(read_file(host.sys("class/infiniband/mlx5_3/ports/1/state")), "4: ACTIVE\n")
      << "another PF's port";
}

TEST(AFakeHostFault, PortStateHangsUntilTheDriverRecovers) {
  VFREADY_REQUIRE_ROOT();
  auto topo = TopologyBuilder::reference();
  topo.function(kPf)["faults"] = {{"port_state_hangs", true}};
  FakeHost host(topo);
  const auto port = host.sys("class/infiniband/mlx5_0/ports/1/");
  Background reader("cat " + port + "state");
  // A healthy read answers in microseconds; this one is still blocked 200 ms later.
  EXPECT_TRUE(reader.wait(200ms).timed_out);
  EXPECT_EQ(read_file(port + "link_layer"), "InfiniBand\n") << "the rest still answers";
  ASSERT_EQ(::kill(host.pid(), SIGUSR1), 0);  // the firmware answers
  auto done = reader.wait(10s);
  EXPECT_FALSE(done.timed_out);
  EXPECT_EQ(done.exit_code, 0);
  EXPECT_EQ(read_file(port + "state"), "4: ACTIVE\n") << "later reads do not hang";
}

// OFED's port_show() returns mlx5_core_query_gids()'s error (a firmware command): VF 1's
// port GUID does not read; its node GUID, and VF 0's port GUID, do.
TEST(AFakeHostFault, PortReadFailVfsFailReadsOfTheirPortGuidOnly) {
  VFREADY_REQUIRE_ROOT();
  auto topo = TopologyBuilder::reference().probe_ms(1);
  topo.function(kPf)["faults"] = {{"port_read_fail_vfs", {1}}};
  FakeHost host(topo);
  ASSERT_EQ(sh("echo 2 > " + host.pci(kPf, "sriov_numvfs")).exit_code, 0);
  const auto sriov = host.pci(kPf, "sriov/");
  EXPECT_THAT(sh("cat " + sriov + "1/port").err, HasSubstr("Input/output error"));
  EXPECT_EQ(read_file(sriov + "1/node"), "00:00:00:00:00:00:00:00\n");
  EXPECT_EQ(read_file(sriov + "0/port"), "00:00:00:00:00:00:00:00\n");
  EXPECT_EQ(sh("echo 02:00:00:00:00:00:00:01 > " + sriov + "1/port").exit_code, 0)
      << "the write asks no query";
}

TEST(AFakeHostFault, PortReadHangVfsBlockUntilTheFirmwareAnswers) {
  VFREADY_REQUIRE_ROOT();
  auto topo = TopologyBuilder::reference().probe_ms(1);
  topo.function(kPf)["faults"] = {{"port_read_hang_vfs", {1}}};
  FakeHost host(topo);
  ASSERT_EQ(sh("echo 2 > " + host.pci(kPf, "sriov_numvfs")).exit_code, 0);
  const auto sriov = host.pci(kPf, "sriov/");
  Background reader("cat " + sriov + "1/port");
  // A healthy read answers in microseconds; this one is still blocked 200 ms later.
  EXPECT_TRUE(reader.wait(200ms).timed_out);
  EXPECT_EQ(read_file(sriov + "0/port"), "00:00:00:00:00:00:00:00\n") << "the rest still answers";
  ASSERT_EQ(::kill(host.pid(), SIGUSR1), 0);  // the firmware answers
  auto done = reader.wait(10s);
  EXPECT_FALSE(done.timed_out);
  EXPECT_EQ(done.exit_code, 0);
  EXPECT_EQ(done.out, "00:00:00:00:00:00:00:00\n");
  EXPECT_EQ(read_file(sriov + "1/port"), "00:00:00:00:00:00:00:00\n") << "later reads do not hang";
}

TEST(AFakeHostFault, PfWithoutDriverAnswersEnoent) {
  VFREADY_REQUIRE_ROOT();
  auto topo = TopologyBuilder::reference();
  topo.function(kPf).erase("driver");
  FakeHost host(topo);
  EXPECT_FALSE(exists(host.pci(kPf, "driver")));
  EXPECT_THAT(host.links(), Not(Contains("ibp24s0")));
  EXPECT_THAT(sh("echo 2 > " + host.pci(kPf, "sriov_numvfs")).err,
              HasSubstr("No such file or directory"));
}

TEST(AFakeHostFault, KernelLogLinesReadLikeKmsg) {
  VFREADY_REQUIRE_ROOT();
  auto topo = TopologyBuilder::reference();
  topo.json()["kernel_log"] = {"mlx5_core: Unknown symbol strlcpy (err -2)",
                               "mlx5_core 0000:18:00.0: firmware version: 28.43.1014"};
  FakeHost host(topo);
  auto r = sh("cat " + host.root() + "/dev/kmsg");
  EXPECT_THAT(r.out, HasSubstr(";mlx5_core: Unknown symbol strlcpy (err -2)\n"));
  const auto lines = host.kernel_log();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[0],
              MatchesRegex("3,0,[0-9]+,-;mlx5_core: Unknown symbol strlcpy \\(err -2\\)"));
  EXPECT_THAT(lines[1], MatchesRegex("6,1,[0-9]+,-;mlx5_core 0000:18:00.0: firmware version.*"));
}

TEST(AFakeHostFault, MissingModulesHaveNoSysfsDirectory) {
  VFREADY_REQUIRE_ROOT();
  auto topo = TopologyBuilder::reference();
  topo.json()["modules"].erase("mlx5_ib");
  FakeHost host(topo);
  EXPECT_EQ(read_file(host.sys("module/mlx5_core/version")), "24.10-0.7.0\n");
  EXPECT_FALSE(exists(host.sys("module/mlx5_ib")));
  EXPECT_TRUE(exists(host.sys("module/ib_core")));
  EXPECT_FALSE(exists(host.sys("module/ib_core/version")));
}

TEST(AFakeHostFault, PortsShowTheirLinkLayerFirmwareAndStates) {
  VFREADY_REQUIRE_ROOT();
  auto topo = TopologyBuilder::reference();
  auto& ib = topo.function("0000:40:00.0")["infiniband"];
  ib["fw_ver"] = "28.39.1002";
  ib["ports"][0] = {
      {"link_layer", "Ethernet"}, {"state", "1: DOWN"}, {"phys_state", "3: Disabled"}};
  FakeHost host(topo);
  const auto port = host.sys("class/infiniband/mlx5_3/ports/1/");
  EXPECT_EQ(read_file(port + "link_layer"), "Ethernet\n");
  EXPECT_EQ(read_file(port + "state"), "1: DOWN\n");
  EXPECT_EQ(read_file(port + "phys_state"), "3: Disabled\n");
  EXPECT_EQ(read_file(host.sys("class/infiniband/mlx5_3/fw_ver")), "28.39.1002\n");
  EXPECT_EQ(read_file(host.sys("class/infiniband/mlx5_0/fw_ver")), "28.43.1014\n");
  EXPECT_EQ(read_file(host.sys("class/infiniband/mlx5_0/node_guid")), "a088:c203:0030:1000\n");
  EXPECT_EQ(read_file(host.sys("class/infiniband/mlx5_0/ports/1/gids/0")),
            "fe80:0000:0000:0000:a088:c203:0030:1000\n");
  EXPECT_EQ(read_file(host.sys("class/infiniband/mlx5_0/device/sriov_totalvfs")), "16\n");
}
