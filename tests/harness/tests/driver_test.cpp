// SPDX-License-Identifier: Apache-2.0
// What the fake host's mlx5 driver and udevd do around a probe: a VF's RDMA device, a PF
// whose driver goes, the autoprobe flag's input, and a name udev keeps.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <filesystem>
#include <optional>

#include "fake_host.hpp"
#include "process.hpp"
#include "root_only.hpp"

using namespace vfready::testing;
using testing::HasSubstr;

namespace {

constexpr const char* kPf = "0000:18:00.0";
constexpr const char* kVf = "0000:18:00.1";

std::string echo_to(const std::string& value, const std::string& path) {
  return "echo " + value + " > '" + path + "'";
}

// Writes `value` to `path` as vfready does (O_WRONLY, no O_TRUNC, which would take the
// inode lock a running FUSE write holds); exec'd, so the pid is dd's.
std::string dd_to(const std::string& value, const std::string& path) {
  return "exec dd of='" + path + "' conv=notrunc status=none <<< " + value;
}

// Whether `pid` is inside a write(2) now (syscall 1 on x86-64).
bool in_write(pid_t pid) {
  return read_file("/proc/" + std::to_string(pid) + "/syscall").starts_with("1 ");
}

// `vfs` VFs of kPf made without a probe, then VF 0 probed by hand, its probe hanging (the
// topology's probe_hang_vfs) with its locks held until the fake host gets SIGUSR1. The
// probe has begun once mlx5 says the firmware's version (a write(2) under way may not
// have reached the fake host yet).
std::unique_ptr<Background> hang_a_probe(const FakeHost& host, int vfs) {
  const auto autoprobe = host.pci(kPf, "sriov_drivers_autoprobe");
  const auto made = sh(echo_to("0", autoprobe) + " && " +
                       echo_to(std::to_string(vfs), host.pci(kPf, "sriov_numvfs")) + " && " +
                       echo_to("1", autoprobe));
  if (made.exit_code != 0) {
    return nullptr;
  }
  auto probe = std::make_unique<Background>(dd_to(kVf, host.sys("bus/pci/drivers_probe")));
  const auto said = [&] {
    for (const auto& line : host.kernel_log()) {
      if (line.find(std::string("mlx5_core ") + kVf + ": firmware version") != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  return wait_until(said, 10s) ? std::move(probe) : nullptr;
}

// The reference host, VF 0 of kPf hanging in its probe until SIGUSR1.
TopologyBuilder with_a_hanging_probe() {
  auto topology = TopologyBuilder::reference().probe_ms(1);
  topology.function(kPf)["faults"] = {{"probe_hang_vfs", {0}}};
  return topology;
}

// dd_to() in the background, once it is inside its write(2) or done (nullptr if neither
// within 10 s).
std::unique_ptr<Background> writing(const std::string& value, const std::string& path) {
  auto writer = std::make_unique<Background>(dd_to(value, path));
  const pid_t pid = writer->pid();
  return wait_until([&] { return in_write(pid) || writer->exited(); }, 10s) ? std::move(writer)
                                                                            : nullptr;
}

// The RDMA device directory under a VF ("" for none).
std::string rdma_dir(const FakeHost& host, const std::string& vf) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(host.pci(vf, "infiniband"), ec)) {
    return e.path().string();
  }
  return {};
}

}  // namespace

// mlx5_ib adds an RDMA device for a bound VF (mlx5_ib_add(), at the driver's bind) whose
// node GUID and GID 0 are what the VF took at its probe, and removes it at unbind.
TEST(AFakeHostVfRdma, ShowsTheGuidsTheVfTookAtItsProbeAndGoesAtUnbind) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  const auto sriov = host.sys("class/infiniband/mlx5_0/device/sriov/0/");
  ASSERT_EQ(sh(echo_to("0", host.pci(kPf, "sriov_drivers_autoprobe")) + " && " +
               echo_to("1", host.pci(kPf, "sriov_numvfs")) + " && " +
               echo_to("1", host.pci(kPf, "sriov_drivers_autoprobe")) + " && " +
               echo_to("02:00:00:00:00:00:01:00", sriov + "node") + " && " +
               echo_to("02:00:00:00:00:00:01:01", sriov + "port"))
                .exit_code,
            0);
  EXPECT_EQ(rdma_dir(host, kVf), "") << "unbound: no RDMA device";
  ASSERT_EQ(sh(echo_to(kVf, host.sys("bus/pci/drivers_probe"))).exit_code, 0);
  const auto dir = rdma_dir(host, kVf);
  ASSERT_NE(dir, "");
  EXPECT_EQ(read_file(dir + "/node_guid"), "0200:0000:0000:0100\n");
  EXPECT_EQ(read_file(dir + "/ports/1/gids/0"), "fe80:0000:0000:0000:0200:0000:0000:0101\n");
  ASSERT_EQ(sh(echo_to(kVf, host.sys("bus/pci/drivers/mlx5_core/unbind"))).exit_code, 0);
  EXPECT_EQ(rdma_dir(host, kVf), "");
}

// mlx5's remove (remove_one()) disables SR-IOV before the PF lets go: its VFs and their
// netdevs go with it.
TEST(AFakeHostPfUnbind, DisablesSriovFirst) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  ASSERT_EQ(sh(echo_to("2", host.pci(kPf, "sriov_numvfs"))).exit_code, 0);
  ASSERT_TRUE(host.has_link("ibp24s0v1"));
  ASSERT_EQ(sh(echo_to(kPf, host.sys("bus/pci/drivers/mlx5_core/unbind"))).exit_code, 0);
  EXPECT_EQ(read_file(host.pci(kPf, "sriov_numvfs")), "0\n");
  EXPECT_FALSE(exists(host.pci(kPf, "virtfn0")));
  EXPECT_FALSE(exists(host.pci(kPf, "driver")));
  EXPECT_EQ(host.netdev_of(kPf), "");
  const auto write = sh(echo_to("2", host.pci(kPf, "sriov_numvfs")));
  EXPECT_THAT(write.err, HasSubstr("No such file or directory")) << "no driver: ENOENT";
}

// sriov_drivers_autoprobe_store() takes kstrtobool() input: its first byte (y/t/1 on,
// n/f/0 off) or on/of; the VM's kernel took t and f, and refused e and d
// (tests/vm/sysfs-answers.kernel).
TEST(AFakeHostAutoprobe, TakesWhatKstrtoboolTakes) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference());
  const auto file = host.pci(kPf, "sriov_drivers_autoprobe");
  for (const auto& [value, want] :
       std::vector<std::pair<std::string, std::string>>{{"n", "0\n"},
                                                        {"Y", "1\n"},
                                                        {"off", "0\n"},
                                                        {"on", "1\n"},
                                                        {"f", "0\n"},
                                                        {"t", "1\n"},
                                                        {"0", "0\n"},
                                                        {"1x", "1\n"},
                                                        {"oF", "0\n"}}) {
    ASSERT_EQ(sh(echo_to(value, file)).exit_code, 0) << value;
    EXPECT_EQ(read_file(file), want) << value;
  }
  EXPECT_THAT(sh(echo_to("maybe", file)).err, HasSubstr("Invalid argument"));
  EXPECT_EQ(read_file(file), "0\n") << "a refused write changes nothing";
  for (const char* refused : {"o", "e", "d"}) {
    EXPECT_THAT(sh(echo_to(refused, file)).err, HasSubstr("Invalid argument")) << refused;
  }
}

// 99-default.link's NamePolicy= begins with "keep": a netdev renamed before udevd got
// to it (name_assign_type NET_NAME_RENAMED) keeps that name; its altnames still come.
TEST(AFakeHostUdev, KeepsANameSomeoneGaveBeforeItHandledTheNetdev) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1).udev_latency_ms(1000));
  ASSERT_EQ(sh(echo_to("1", host.pci(kPf, "sriov_numvfs"))).exit_code, 0);
  const auto kernel_name = host.netdev_of(kVf);
  ASSERT_THAT(kernel_name, testing::MatchesRegex("ib[0-9]+"));
  ASSERT_EQ(sh("ip -n " + host.netns() + " link set " + kernel_name + " name mine0").exit_code, 0);
  ASSERT_TRUE(wait_until([&] { return !exists(host.root() + "/run/udev/queue"); }, 5s));
  EXPECT_EQ(host.netdev_of(kVf), "mine0");
  const auto link = sh("ip -n " + host.netns() + " -j -d link show dev mine0");
  ASSERT_EQ(link.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(link.out).at(0).value("altnames", std::vector<std::string>{}),
            std::vector<std::string>{"ibp24s0v0"});
}

// What a PF unbind, and a write of `value` to `path` that comes during its remove, answer:
// the remove waits inside (disabling SR-IOV waits for VF 0's hanging probe) until the
// probe is let go (SIGUSR1). Also the probe's answer; nullopt when a writer could not be
// started or seen under way.
struct DuringRemove {
  CommandResult probe;
  CommandResult unbind;
  CommandResult write;
};
std::optional<DuringRemove> write_during_pf_remove(const FakeHost& host, const std::string& value,
                                                   const std::string& path) {
  const auto probe = hang_a_probe(host, 1);
  const auto unbind = probe ? writing(kPf, host.sys("bus/pci/drivers/mlx5_core/unbind")) : nullptr;
  const auto write = unbind ? writing(value, path) : nullptr;
  if (!write || kill(host.pid(), SIGUSR1) != 0) {
    return std::nullopt;
  }
  DuringRemove out;
  out.probe = probe->wait(30s);
  out.unbind = unbind->wait(30s);
  out.write = write->wait(30s);
  return out;
}

// The PF's remove runs under its device lock, which a sriov_numvfs write takes too
// (device_release_driver(); sriov_numvfs_store()): a write that comes while the driver
// goes waits, then finds no driver (ENOENT), and no VF is made on a PF without one. (A
// write that reaches the fake host before the unbind does finds the VF there: EBUSY.)
TEST(AFakeHostPfUnbind, LeavesNoVfOnThePfWhenASriovNumvfsWriteComesMeanwhile) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(with_a_hanging_probe());
  const auto r = write_during_pf_remove(host, "2", host.pci(kPf, "sriov_numvfs"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->probe.exit_code, 0);
  EXPECT_EQ(r->unbind.exit_code, 0);
  EXPECT_NE(r->write.exit_code, 0);
  EXPECT_THAT(r->write.err, testing::AnyOf(HasSubstr("No such file or directory"),
                                           HasSubstr("Device or resource busy")));
  EXPECT_EQ(read_file(host.pci(kPf, "sriov_numvfs")), "0\n");
  EXPECT_FALSE(exists(host.pci(kPf, "virtfn0")));
  EXPECT_FALSE(exists(host.pci(kPf, "driver")));
}

// unbind_store() asks whether the driver has the device without its lock, then waits for
// it: a second unbind during the remove succeeds once the first is done, and a bind
// after binds.
TEST(AFakeHostPfUnbind, LetsASecondUnbindWaitForTheRemoveAndSucceed) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(with_a_hanging_probe());
  const auto r = write_during_pf_remove(host, kPf, host.sys("bus/pci/drivers/mlx5_core/unbind"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->unbind.exit_code, 0);
  EXPECT_EQ(r->write.exit_code, 0) << r->write.err;
  EXPECT_FALSE(exists(host.pci(kPf, "driver")));
  ASSERT_EQ(sh(echo_to(kPf, host.sys("bus/pci/drivers/mlx5_core/bind"))).exit_code, 0);
  EXPECT_TRUE(exists(host.pci(kPf, "driver")));
}

// A bind waits for a probe of the device in progress (the device lock), then finds the
// device taken: vfio-pci's bind during mlx5_core's probe of the VF fails with EBUSY
// (__driver_probe_device(), drivers/base/dd.c) and the VF stays mlx5_core's.
TEST(AFakeHostVfio, WaitsForAProbeInProgressAndFindsTheVfTaken) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(with_a_hanging_probe());
  const auto probe = hang_a_probe(host, 2);
  ASSERT_NE(probe, nullptr);
  // Another VF's lock is its own: vfio-pci takes VF 1 while VF 0's probe hangs.
  const std::string other = "0000:18:00.2";
  ASSERT_EQ(sh(echo_to("vfio-pci", host.pci(other, "driver_override")) + " && " +
                   echo_to(other, host.sys("bus/pci/drivers/vfio-pci/bind")),
               10s)
                .exit_code,
            0);
  EXPECT_EQ(sh("readlink '" + host.pci(other, "driver") + "'").out,
            "../../../bus/pci/drivers/vfio-pci\n");
  ASSERT_EQ(sh(echo_to("vfio-pci", host.pci(kVf, "driver_override"))).exit_code, 0);
  const auto bind = writing(kVf, host.sys("bus/pci/drivers/vfio-pci/bind"));
  ASSERT_NE(bind, nullptr);
  EXPECT_FALSE(bind->exited()) << "the bind waits for the probe";
  // drivers_probe (which takes the override) waits too, and says nothing of what it
  // found: a device with a driver is skipped (bus_rescan_devices_helper()).
  const auto reprobe = writing(kVf, host.sys("bus/pci/drivers_probe"));
  ASSERT_NE(reprobe, nullptr);
  ASSERT_EQ(kill(host.pid(), SIGUSR1), 0);  // the probe completes
  EXPECT_EQ(probe->wait(30s).exit_code, 0);
  const auto bound = bind->wait(30s);
  EXPECT_NE(bound.exit_code, 0);
  EXPECT_THAT(bound.err, HasSubstr("Device or resource busy"));
  const auto reprobed = reprobe->wait(30s);
  EXPECT_EQ(reprobed.exit_code, 0) << reprobed.err;
  EXPECT_EQ(sh("readlink '" + host.pci(kVf, "driver") + "'").out,
            "../../../bus/pci/drivers/mlx5_core\n");
  EXPECT_FALSE(exists(host.sys("bus/pci/drivers/vfio-pci/" + std::string(kVf))));
}
