// SPDX-License-Identifier: Apache-2.0
// sriov_numvfs and driver binding on the fake host, driven by a shell as an operator
// (or the seed's script) would.
#include <dirent.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <thread>
#include <vector>

#include "fake_host.hpp"
#include "kernel_rules.hpp"
#include "process.hpp"
#include "root_only.hpp"

using namespace vfready::testing;
using testing::Contains;
using testing::HasSubstr;
using testing::Not;

namespace {

constexpr const char* kPf = "0000:18:00.0";

std::string echo_to(const std::string& value, const std::string& path) {
  return "echo " + value + " > '" + path + "'";
}

// One write(2) of `value` to `path`, as a sysfs attribute takes it: whether it took all.
bool write_attribute(const std::string& path, const std::string& value) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    return false;
  }
  const bool ok = write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
  close(fd);
  return ok;
}

}  // namespace

TEST(AFakeHostSriovNumvfs, CreatesVfsWithNetdevsTakingTheProbeTimeOfEachVf) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(20));
  const auto start = std::chrono::steady_clock::now();
  auto r = sh(echo_to("8", host.pci(kPf, "sriov_numvfs")));
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GE(took, 8 * 20ms);
  EXPECT_LT(took, 8 * 20ms + 5s);
  EXPECT_EQ(read_file(host.pci(kPf, "sriov_numvfs")), "8\n");
  for (int i = 0; i < 8; ++i) {
    EXPECT_TRUE(exists(host.pci(kPf, "virtfn" + std::to_string(i)))) << i;
    EXPECT_TRUE(host.has_link("ibp24s0v" + std::to_string(i)));
  }
  EXPECT_FALSE(exists(host.pci(kPf, "virtfn8")));
  EXPECT_THAT(host.links(), Not(Contains("ibp24s0v8")));
}

TEST(AFakeHostSriovNumvfs, AnswersWithTheKernelsErrnos) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  const auto numvfs = host.pci(kPf, "sriov_numvfs");
  ASSERT_EQ(sh(echo_to("8", numvfs)).exit_code, 0);
  auto busy = sh(echo_to("4", numvfs));
  EXPECT_NE(busy.exit_code, 0);
  EXPECT_THAT(busy.err, HasSubstr("Device or resource busy"));
  auto range = sh(echo_to("17", numvfs));
  EXPECT_THAT(range.err, HasSubstr("Numerical result out of range"));
  auto garbage = sh(echo_to("eight", numvfs));
  EXPECT_THAT(garbage.err, HasSubstr("Invalid argument"));
  // sriov_numvfs_store() turns every kstrtou16() error into EINVAL, overflow too (since
  // 5.16, 36f354ec7bf9); ERANGE is for counts above sriov_totalvfs.
  auto huge = sh(echo_to("70000", numvfs));
  EXPECT_THAT(huge.err, HasSubstr("Invalid argument"));
  EXPECT_EQ(sh(echo_to("8", numvfs)).exit_code, 0) << "the same count is a no-op";
  EXPECT_EQ(read_file(numvfs), "8\n");
  EXPECT_THAT(
      host.writes(),
      testing::ElementsAre(HasSubstr("sriov_numvfs 8 0"), HasSubstr("sriov_numvfs 4 16"),
                           HasSubstr("sriov_numvfs 17 34"), HasSubstr("sriov_numvfs eight 22"),
                           HasSubstr("sriov_numvfs 70000 22"), HasSubstr("sriov_numvfs 8 0")));
  EXPECT_THAT(host.kernel_log(), Contains(HasSubstr("Disable before enabling 4 VFs")));
}

TEST(AFakeHostSriovNumvfs, ZeroRemovesEveryVfAndItsNetdev) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  const auto numvfs = host.pci(kPf, "sriov_numvfs");
  ASSERT_EQ(sh(echo_to("8", numvfs)).exit_code, 0);
  ASSERT_EQ(sh(echo_to("0", numvfs)).exit_code, 0);
  EXPECT_EQ(read_file(numvfs), "0\n");
  EXPECT_FALSE(exists(host.pci(kPf, "virtfn0")));
  EXPECT_FALSE(exists(host.pci("0000:18:00.1")));
  for (const auto& name : host.links()) {
    EXPECT_THAT(name, Not(HasSubstr("ibp24s0v")));
  }
  EXPECT_TRUE(exists(host.sys("class/net/ibp24s0"))) << "the PF keeps its netdev";
}

TEST(AFakeHostSriovNumvfs, LeavesNoDirectoryOfARemovedVfToOpen) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  const auto numvfs = host.pci(kPf, "sriov_numvfs");
  ASSERT_EQ(sh(echo_to("1", numvfs)).exit_code, 0);
  // Its directory opened (the kernel keeps its name) while the VF is there, not after.
  const auto vf_dir = host.sys("devices/pci0000:18/0000:18:00.1");
  DIR* dir = opendir(vf_dir.c_str());
  ASSERT_NE(dir, nullptr);
  closedir(dir);
  ASSERT_EQ(sh(echo_to("0", numvfs)).exit_code, 0);
  errno = 0;
  dir = opendir(vf_dir.c_str());
  EXPECT_EQ(dir, nullptr);
  EXPECT_EQ(errno, ENOENT);
  if (dir != nullptr) {
    closedir(dir);
  }
}

// Every PF's sriov_numvfs written at once, again and again, as the passes of vfready
// write them: one PF's VFs come and go while another's write starts. (The fake host
// once looked its PF up in the table of functions unlocked while another PF's write
// added VFs to it; now and then that lookup failed and the fake host aborted.)
TEST(AFakeHostSriovNumvfs, TakesWritesOfEveryPfAtOnce) {
  VFREADY_REQUIRE_ROOT();
  auto topology = TopologyBuilder::reference().probe_ms(1);
  const std::vector<std::string> pfs = {"0000:18:00.0", "0000:40:00.0", "0000:4f:00.0",
                                        "0000:5e:00.0", "0000:9a:00.0", "0000:c0:00.0",
                                        "0000:ce:00.0", "0000:dc:00.0"};
  for (const auto& pf : pfs) {
    topology.function(pf)["sriov"]["totalvfs"] = 127;  // many VFs added beside each write
  }
  FakeHost host(topology);
  std::atomic<int> failed{0};
  std::vector<std::thread> writers;
  for (const auto& pf : pfs) {
    writers.emplace_back([&, pf] {
      const auto numvfs = host.pci(pf, "sriov_numvfs");
      bool ok = write_attribute(host.pci(pf, "sriov_drivers_autoprobe"), "0");
      for (int round = 0; ok && round < 10; ++round) {
        ok = write_attribute(numvfs, "127") && write_attribute(numvfs, "0");
      }
      failed += ok ? 0 : 1;
    });
  }
  for (auto& w : writers) {
    w.join();
  }
  EXPECT_EQ(failed, 0);
  for (const auto& pf : pfs) {
    EXPECT_EQ(read_file(host.pci(pf, "sriov_numvfs")), "0\n") << pf;
  }
}

TEST(AFakeHostSriovNumvfs, BlocksReadsOfItselfButNoOtherFileWhileVfsProbe) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(250));
  Background writer(echo_to("8", host.pci(kPf, "sriov_numvfs")));
  // The write is under way once its first VF is on PCI.
  ASSERT_TRUE(wait_until([&] { return exists(host.pci(kPf, "virtfn0")); }, 10s));
  EXPECT_EQ(read_file(host.pci(kPf, "sriov_totalvfs")), "16\n");
  EXPECT_FALSE(exists(host.pci(kPf, "virtfn7"))) << "reading another attribute waited";
  // A read of sriov_numvfs waits for the write: when it returns, every VF is there.
  EXPECT_EQ(read_file(host.pci(kPf, "sriov_numvfs")), "8\n");
  EXPECT_TRUE(exists(host.pci(kPf, "virtfn7")));
  EXPECT_TRUE(host.has_link("ibp24s0v7"));
  EXPECT_EQ(writer.wait(10s).exit_code, 0);
}

// pci_device_can_probe() (drivers/pci/pci-driver.c): a VF is probed only while its PF's
// sriov_drivers_autoprobe is on or its driver_override is set; drivers_probe_store()
// (drivers/base/bus.c) succeeds all the same, bind_store() returns the probe's -ENODEV.
TEST(AFakeHostWithAutoprobeOff, ProbesNoVfThroughDriversProbeOrBindButSaysSoOnlyThroughBind) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  ASSERT_EQ(sh(echo_to("0", host.pci(kPf, "sriov_drivers_autoprobe"))).exit_code, 0);
  ASSERT_EQ(sh(echo_to("2", host.pci(kPf, "sriov_numvfs"))).exit_code, 0);
  EXPECT_TRUE(exists(host.pci("0000:18:00.1", "physfn")));
  EXPECT_FALSE(exists(host.pci("0000:18:00.1", "driver")));

  EXPECT_EQ(sh(echo_to("0000:18:00.1", host.sys("bus/pci/drivers_probe"))).exit_code, 0)
      << "drivers_probe reports no probe's result";
  EXPECT_FALSE(exists(host.pci("0000:18:00.1", "driver")));
  auto bind = sh(echo_to("0000:18:00.2", host.sys("bus/pci/drivers/mlx5_core/bind")));
  EXPECT_THAT(bind.err, HasSubstr("No such device"));
  EXPECT_FALSE(exists(host.pci("0000:18:00.2", "driver")));
  EXPECT_EQ(host.netdev_of("0000:18:00.1"), "");
  EXPECT_EQ(host.probes().size(), 0u);
  auto unknown = sh(echo_to("0000:18:07.7", host.sys("bus/pci/drivers_probe")));
  EXPECT_THAT(unknown.err, HasSubstr("No such device"));
}

// sriov_drivers_autoprobe_store() only sets the flag: VFs that exist stay as they are,
// and a probe after it binds.
TEST(AFakeHostWithAutoprobeOff, BindsAVfOnlyOnceAutoprobeIsBackOnAndNotBeforeItsProbe) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  ASSERT_EQ(sh(echo_to("0", host.pci(kPf, "sriov_drivers_autoprobe"))).exit_code, 0);
  ASSERT_EQ(sh(echo_to("2", host.pci(kPf, "sriov_numvfs"))).exit_code, 0);
  ASSERT_EQ(sh(echo_to("1", host.pci(kPf, "sriov_drivers_autoprobe"))).exit_code, 0);
  EXPECT_FALSE(exists(host.pci("0000:18:00.1", "driver"))) << "turning it on probes nothing";

  ASSERT_EQ(sh(echo_to("0000:18:00.1", host.sys("bus/pci/drivers_probe"))).exit_code, 0);
  EXPECT_TRUE(exists(host.pci("0000:18:00.1", "driver")));
  EXPECT_TRUE(host.has_link("ibp24s0v0"));
  ASSERT_EQ(sh(echo_to("0000:18:00.2", host.sys("bus/pci/drivers/mlx5_core/bind"))).exit_code, 0);
  EXPECT_TRUE(host.has_link("ibp24s0v1"));
  auto again = sh(echo_to("0000:18:00.2", host.sys("bus/pci/drivers/mlx5_core/bind")));
  EXPECT_THAT(again.err, HasSubstr("Device or resource busy"));
  EXPECT_EQ(sh(echo_to("0000:18:00.2", host.sys("bus/pci/drivers_probe"))).exit_code, 0)
      << "a bound device: nothing to do";

  ASSERT_EQ(sh(echo_to("0000:18:00.2", host.sys("bus/pci/drivers/mlx5_core/unbind"))).exit_code, 0);
  EXPECT_EQ(host.netdev_of("0000:18:00.2"), "");
  EXPECT_FALSE(exists(host.pci("0000:18:00.2", "driver")));
}

// The "|| driver_override" clause of pci_device_can_probe() (since 5.3).
TEST(AFakeHostWithAutoprobeOff, ProbesAVfWhoseDriverOverrideIsSet) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  ASSERT_EQ(sh(echo_to("0", host.pci(kPf, "sriov_drivers_autoprobe"))).exit_code, 0);
  ASSERT_EQ(sh(echo_to("2", host.pci(kPf, "sriov_numvfs"))).exit_code, 0);
  ASSERT_EQ(sh(echo_to("mlx5_core", host.pci("0000:18:00.1", "driver_override"))).exit_code, 0);
  ASSERT_EQ(sh(echo_to("0000:18:00.1", host.sys("bus/pci/drivers_probe"))).exit_code, 0);
  EXPECT_TRUE(exists(host.pci("0000:18:00.1", "driver")));
  // Cleared again (an empty line), the VF keeps its driver; the next VF still is not probed.
  ASSERT_EQ(sh(echo_to("", host.pci("0000:18:00.1", "driver_override"))).exit_code, 0);
  EXPECT_EQ(read_file(host.pci("0000:18:00.1", "driver_override")), "(null)\n");
  EXPECT_TRUE(exists(host.pci("0000:18:00.1", "driver")));
  ASSERT_EQ(sh(echo_to("0000:18:00.2", host.sys("bus/pci/drivers_probe"))).exit_code, 0);
  EXPECT_FALSE(exists(host.pci("0000:18:00.2", "driver")));
}

TEST(AFakeHostOfedGuid, TakesEffectAtTheNextProbeOnly) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  const auto sriov = host.sys("class/infiniband/mlx5_0/device/sriov/");
  ASSERT_EQ(sh(echo_to("0", host.pci(kPf, "sriov_drivers_autoprobe"))).exit_code, 0);
  ASSERT_EQ(sh(echo_to("2", host.pci(kPf, "sriov_numvfs"))).exit_code, 0);
  ASSERT_EQ(sh(echo_to("1", host.pci(kPf, "sriov_drivers_autoprobe"))).exit_code, 0);
  // VF 0: GUIDs set while unbound, then probed: the port GUID is in effect.
  ASSERT_EQ(sh(echo_to("02:00:00:00:00:00:01:00", sriov + "0/node")).exit_code, 0);
  ASSERT_EQ(sh(echo_to("02:00:00:00:00:00:01:01", sriov + "0/port")).exit_code, 0);
  ASSERT_EQ(sh(echo_to("Follow", sriov + "0/policy")).exit_code, 0);
  EXPECT_EQ(read_file(sriov + "0/port"), "00:00:00:00:00:00:00:00\n");
  ASSERT_EQ(sh(echo_to("0000:18:00.1", host.sys("bus/pci/drivers_probe"))).exit_code, 0);
  EXPECT_EQ(read_file(sriov + "0/port"), "02:00:00:00:00:00:01:01\n");
  EXPECT_EQ(read_file(sriov + "0/node"), "02:00:00:00:00:00:01:00\n");
  EXPECT_EQ(read_file(sriov + "0/policy"), "Follow\n");
  // VF 1: probed first, GUID written after without a rebind: still zero.
  ASSERT_EQ(sh(echo_to("0000:18:00.2", host.sys("bus/pci/drivers_probe"))).exit_code, 0);
  ASSERT_EQ(sh(echo_to("02:00:00:00:00:00:02:01", sriov + "1/port")).exit_code, 0);
  EXPECT_EQ(read_file(sriov + "1/port"), "00:00:00:00:00:00:00:00\n");
  // ... until unbind and bind.
  ASSERT_EQ(sh(echo_to("0000:18:00.2", host.sys("bus/pci/drivers/mlx5_core/unbind"))).exit_code, 0);
  ASSERT_EQ(sh(echo_to("0000:18:00.2", host.sys("bus/pci/drivers/mlx5_core/bind"))).exit_code, 0);
  EXPECT_EQ(read_file(sriov + "1/port"), "02:00:00:00:00:00:02:01\n");
  EXPECT_THAT(host.probes(), testing::ElementsAre("0000:18:00.1 02:00:00:00:00:00:01:01",
                                                  "0000:18:00.2 00:00:00:00:00:00:00:00",
                                                  "0000:18:00.2 02:00:00:00:00:00:02:01"));
}

// OFED parses a GUID with sscanf("%02x:" eight times): fewer than eight fields, a missing
// ':' or a field without a hex digit is EINVAL; one-digit fields, spaces before a field
// and anything after the eighth are taken, as the kernel's vsscanf() takes them.
TEST(AFakeHostOfedGuid, ParsesAGuidAsOfedsSscanfDoes) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  ASSERT_EQ(sh(echo_to("1", host.pci(kPf, "sriov_numvfs"))).exit_code, 0);
  const auto sriov = host.sys("class/infiniband/mlx5_0/device/sriov/0/");
  for (const char* bad : {"0200:0000:0000:0001", "02:00:00:00:00:00:00", "zz:00:00:00:00:00:00:01",
                          "02-00-00-00-00-00-00-01", "02:00:00:00:00:00:00:"}) {
    auto r = sh(echo_to(bad, sriov + "port"));
    EXPECT_THAT(r.err, HasSubstr("Invalid argument")) << bad;
  }
  const std::pair<const char*, const char*> taken[] = {
      {"2:0:0:0:0:0:1:3", "02:00:00:00:00:00:01:03"},
      {"02: 00:00:00:00:00:01:04", "02:00:00:00:00:00:01:04"},
      {"02:00:00:00:00:00:01:05:99 and more", "02:00:00:00:00:00:01:05"},
      {"02:00:00:00:00:00:01:0678", "02:00:00:00:00:00:01:06"}};
  const auto mlx5 = host.sys("bus/pci/drivers/mlx5_core/");
  for (const auto& [written, reads] : taken) {
    ASSERT_EQ(sh(echo_to(written, sriov + "port")).exit_code, 0) << written;
    // In effect once the VF is probed again: then read back.
    ASSERT_EQ(sh(echo_to("0000:18:00.1", mlx5 + "unbind")).exit_code, 0);
    ASSERT_EQ(sh(echo_to("0000:18:00.1", mlx5 + "bind")).exit_code, 0);
    EXPECT_EQ(read_file(sriov + "port"), std::string(reads) + "\n") << written;
  }
  EXPECT_THAT(sh(echo_to("Sideways", sriov + "policy")).err, HasSubstr("Invalid argument"));
}

// kernfs serialises writes per open file, not per attribute: two binds through the one
// drivers_probe file probe two devices at once, as the driver core does.
TEST(AFakeHostDriversProbe, ProbesVfsOfTwoPfsAtOnce) {
  VFREADY_REQUIRE_ROOT();
  auto topology = TopologyBuilder::reference().probe_ms(1);
  topology.function("0000:40:00.0")["sriov"]["vf_probe_ms"] = 3000;
  FakeHost host(topology);
  for (const char* pf : {kPf, "0000:40:00.0"}) {
    ASSERT_EQ(sh(echo_to("0", host.pci(pf, "sriov_drivers_autoprobe"))).exit_code, 0);
    ASSERT_EQ(sh(echo_to("1", host.pci(pf, "sriov_numvfs"))).exit_code, 0);
    ASSERT_EQ(sh(echo_to("1", host.pci(pf, "sriov_drivers_autoprobe"))).exit_code, 0);
  }
  // As vfready writes: O_WRONLY, no O_TRUNC. (A shell's `>` truncates, and truncating
  // takes the inode lock, which FUSE holds shared through a running write.)
  const auto write = [&](const std::string& vf) {
    return "exec dd of='" + host.sys("bus/pci/drivers_probe") + "' conv=notrunc status=none <<< " +
           vf;
  };
  Background slow(write("0000:40:00.1"));
  // dd is inside its write(2) (syscall 1 on x86-64): the slow probe has begun.
  ASSERT_TRUE(wait_until(
      [&] {
        return read_file("/proc/" + std::to_string(slow.pid()) + "/syscall").starts_with("1 ");
      },
      10s));
  ASSERT_EQ(sh(write("0000:18:00.1")).exit_code, 0);
  EXPECT_FALSE(slow.exited()) << "the fast probe waited for the slow one";
  EXPECT_FALSE(host.netdev_of("0000:18:00.1").empty());
  EXPECT_EQ(slow.wait(30s).exit_code, 0);
  EXPECT_FALSE(host.netdev_of("0000:40:00.1").empty());
}

// A VF's probe holds that VF's device lock and no other: the driver core takes a parent's
// lock only where the bus asks for it (need_parent_lock, which PCI does not set), and a
// VF's parent is its PF's bus, not the PF. A probe of VF 1 that hangs (firmware that does
// not answer) leaves VF 2 of the same PF to be probed.
TEST(AFakeHostDriversProbe, ProbesAVfWhileAnotherVfOfItsPfHangsInItsProbe) {
  VFREADY_REQUIRE_ROOT();
  auto topology = TopologyBuilder::reference().probe_ms(1);
  topology.function("0000:40:00.0")["faults"] = {{"probe_hang_vfs", {1}}};
  FakeHost host(topology);
  const std::string pf = "0000:40:00.0";
  ASSERT_EQ(sh(echo_to("0", host.pci(pf, "sriov_drivers_autoprobe"))).exit_code, 0);
  ASSERT_EQ(sh(echo_to("3", host.pci(pf, "sriov_numvfs"))).exit_code, 0);
  ASSERT_EQ(sh(echo_to("1", host.pci(pf, "sriov_drivers_autoprobe"))).exit_code, 0);
  const auto write = [&](const std::string& vf) {
    return "exec dd of='" + host.sys("bus/pci/drivers_probe") + "' conv=notrunc status=none <<< " +
           vf;
  };
  Background hung(write("0000:40:00.2"));
  ASSERT_TRUE(wait_until([&] { return host.hangs() == 1; }, 10s));  // VF 1's probe hangs
  const auto other = sh(write("0000:40:00.3"), 20s);
  EXPECT_FALSE(other.timed_out) << "VF 2's probe waited for VF 1's";
  EXPECT_EQ(other.exit_code, 0);
  EXPECT_FALSE(host.netdev_of("0000:40:00.3").empty());
  EXPECT_FALSE(hung.exited());
  ASSERT_EQ(::kill(host.pid(), SIGUSR1), 0);  // the firmware answers: the probe returns
  EXPECT_EQ(hung.wait(30s).exit_code, 0);
}

// sysfs files belong to root: others may read what is world-readable and write nothing.
TEST(AFakeHostVfio, TakesAVfNamedInItsDriverOverrideAndNoOtherDriverMay) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  ASSERT_EQ(sh(echo_to("2", host.pci(kPf, "sriov_numvfs"))).exit_code, 0);
  const std::string vf = "0000:18:00.2";
  const auto vfio = host.sys("bus/pci/drivers/vfio-pci/");
  // vfio-pci has no IDs of its own: without driver_override it takes nothing.
  ASSERT_EQ(sh(echo_to(vf, host.sys("bus/pci/drivers/mlx5_core/unbind"))).exit_code, 0);
  EXPECT_NE(sh(echo_to(vf, vfio + "bind")).exit_code, 0);
  ASSERT_EQ(sh(echo_to("vfio-pci", host.pci(vf, "driver_override"))).exit_code, 0);
  EXPECT_EQ(read_file(host.pci(vf, "driver_override")), "vfio-pci\n");
  // drivers_probe now takes the override, as the kernel's does.
  ASSERT_EQ(sh(echo_to(vf, host.sys("bus/pci/drivers_probe"))).exit_code, 0);
  EXPECT_EQ(sh("readlink " + host.pci(vf, "driver")).out, "../../../bus/pci/drivers/vfio-pci\n");
  EXPECT_THAT(read_file(host.pci(vf, "uevent")), HasSubstr("DRIVER=vfio-pci"));
  EXPECT_FALSE(exists(host.pci(vf, "net"))) << "a VF vfio-pci holds has no netdev";
  EXPECT_NE(sh(echo_to(vf, host.sys("bus/pci/drivers/mlx5_core/bind"))).exit_code, 0);
  ASSERT_EQ(sh(echo_to(vf, vfio + "unbind")).exit_code, 0);
  EXPECT_FALSE(exists(host.pci(vf, "driver")));
}

TEST(AFakeHostAttribute, IsWritableByRootOnly) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  ASSERT_EQ(chmod(host.root().c_str(), 0755), 0);  // made by mkdtemp: 0700
  const auto nobody = [](const std::string& command) {
    return sh("setpriv --reuid=65534 --regid=65534 --clear-groups sh -c \"" + command + "\"");
  };
  const auto read = nobody("cat '" + host.pci(kPf, "sriov_totalvfs") + "'");
  EXPECT_EQ(read.exit_code, 0) << read.err;
  EXPECT_EQ(trimmed(read.out), "16");
  const auto write = nobody(echo_to("1", host.pci(kPf, "sriov_numvfs")));
  EXPECT_THAT(write.err, HasSubstr("Permission denied"));
  EXPECT_EQ(read_file(host.pci(kPf, "sriov_numvfs")), "0\n");
}

namespace {

// Whether `pid` is inside a write(2) now (syscall 1 on x86-64).
bool in_write(pid_t pid) {
  return read_file("/proc/" + std::to_string(pid) + "/syscall").starts_with("1 ");
}

// Two PFs, the first one's sriov_numvfs write hanging in its driver until SIGUSR1:
// whether a write on the second PF completes meanwhile.
void numvfs_beside_a_hung_one(bool serialized) {
  auto topology = TopologyBuilder::reference().probe_ms(1);
  topology.function(kPf)["faults"] = {{"numvfs_write_hangs", true}};
  topology.json()["kernel"]["serializes_sriov_configure"] = serialized;
  FakeHost host(topology);
  Background hung(echo_to("1", host.pci(kPf, "sriov_numvfs")));
  ASSERT_TRUE(wait_until([&] { return in_write(hung.pid()); }, 10s));
  Background other(echo_to("1", host.pci("0000:40:00.0", "sriov_numvfs")));
  if (serialized) {
    // It waits for the rescan lock: inside its write, and no VF made for as long as the
    // other write hangs (a 1 ms probe would have made one many times over in 500 ms).
    ASSERT_TRUE(wait_until([&] { return in_write(other.pid()); }, 10s));
    EXPECT_FALSE(wait_until([&] { return exists(host.pci("0000:40:00.0", "virtfn0")); }, 500ms));
    EXPECT_FALSE(other.exited());
    ASSERT_EQ(kill(host.pid(), SIGUSR1), 0);  // the driver recovers
    EXPECT_EQ(hung.wait(10s).exit_code, 0);
    EXPECT_EQ(other.wait(10s).exit_code, 0);
  } else {
    EXPECT_EQ(other.wait(10s).exit_code, 0) << "it did not wait for the other PF";
    EXPECT_FALSE(hung.exited());
    ASSERT_EQ(kill(host.pid(), SIGUSR1), 0);
    EXPECT_EQ(hung.wait(10s).exit_code, 0);
  }
  EXPECT_TRUE(exists(host.pci("0000:40:00.0", "virtfn0")));
}

}  // namespace

// sriov_numvfs_store() takes the global pci_lock_rescan_remove() around the driver's
// sriov_configure() on newer kernels (a5338e365c45): writes of different PFs run one
// after another there, and at once where the topology's kernel does not.
TEST(AFakeHostSriovNumvfs, RunsWritesOfTwoPfsOneAfterAnotherWhereTheKernelSerializesThem) {
  VFREADY_REQUIRE_ROOT();
  numvfs_beside_a_hung_one(true);
}

TEST(AFakeHostSriovNumvfs, RunsWritesOfTwoPfsAtOnceWhereTheKernelDoesNot) {
  VFREADY_REQUIRE_ROOT();
  numvfs_beside_a_hung_one(false);
}

// sriov_numvfs_store() refuses a count over VFs that exist (EBUSY) before it takes the
// rescan lock and calls the driver: a PF with VFs answers so at once, though another PF's
// write holds that lock.
TEST(AFakeHostSriovNumvfs, RefusesACountOverExistingVfsWithoutWaitingForTheRescanLock) {
  VFREADY_REQUIRE_ROOT();
  auto topology = TopologyBuilder::reference().probe_ms(1);
  topology.function(kPf)["faults"] = {{"numvfs_write_hangs", true}};
  topology.json()["kernel"]["serializes_sriov_configure"] = true;
  FakeHost host(topology);
  ASSERT_EQ(sh(echo_to("2", host.pci("0000:40:00.0", "sriov_numvfs"))).exit_code, 0);
  Background hung(echo_to("1", host.pci(kPf, "sriov_numvfs")));
  // Its driver call hangs, under the rescan lock.
  ASSERT_TRUE(wait_until([&] { return host.hangs() == 1; }, 10s));
  const auto over = sh(echo_to("3", host.pci("0000:40:00.0", "sriov_numvfs")), 20s);
  EXPECT_FALSE(over.timed_out) << "it waited for the rescan lock";
  EXPECT_THAT(over.err, HasSubstr("Device or resource busy"));
  ASSERT_EQ(kill(host.pid(), SIGUSR1), 0);  // the driver recovers
  EXPECT_EQ(hung.wait(10s).exit_code, 0);
}

// The check the daemon's tests make of writes.log finds a probe the kernel refuses.
TEST(TheProbeCheck, FindsAProbeWrittenWhileAutoprobeWasOffAndNoOtherwise) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  ASSERT_EQ(sh(echo_to("0", host.pci(kPf, "sriov_drivers_autoprobe"))).exit_code, 0);
  ASSERT_EQ(sh(echo_to("3", host.pci(kPf, "sriov_numvfs"))).exit_code, 0);
  ASSERT_EQ(sh(echo_to("0000:18:00.1", host.sys("bus/pci/drivers_probe"))).exit_code, 0);
  ASSERT_EQ(sh(echo_to("mlx5_core", host.pci("0000:18:00.2", "driver_override"))).exit_code, 0);
  ASSERT_EQ(sh(echo_to("0000:18:00.2", host.sys("bus/pci/drivers_probe"))).exit_code, 0);
  ASSERT_EQ(sh(echo_to("1", host.pci(kPf, "sriov_drivers_autoprobe"))).exit_code, 0);
  ASSERT_EQ(sh(echo_to("0000:18:00.3", host.sys("bus/pci/drivers/mlx5_core/bind"))).exit_code, 0);
  EXPECT_THAT(probes_the_kernel_refuses(host),
              testing::ElementsAre(HasSubstr("sys/bus/pci/drivers_probe 0000:18:00.1 0")));
}
