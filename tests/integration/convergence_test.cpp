// SPDX-License-Identifier: Apache-2.0
// vfreadyd converges from what it finds: VFs made by someone else, VFs in use, names
// held by others, and a config that accepts a degraded bring-up.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon_run.hpp"
#include "notify_socket.hpp"
#include "root_only.hpp"
#include "service_daemon.hpp"

using namespace vfready::testing;
using testing::Contains;
using testing::HasSubstr;
using testing::Not;

namespace {

constexpr const char* kPf = "0000:18:00.0";

std::string one_pf_config(int vfs) {
  return R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": )" + std::to_string(vfs) +
         R"(, "vf_name": "ibs0v{vf}"}]})";
}

}  // namespace

TEST(VfreadydConvergence, RebindsVfsThatCameUpWithoutTheirGuid) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  // The seed's way: VFs probed at once, with zero GUIDs.
  ASSERT_EQ(sh("echo 2 > " + host.pci(kPf, "sriov_numvfs")).exit_code, 0);
  ASSERT_EQ(read_file(host.pci(kPf, "sriov/0/port")), "00:00:00:00:00:00:00:00\n");
  auto r = sh(vfreadyd_command(host, write_config(host, one_pf_config(2))), 60s);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(read_file(host.pci(kPf, "sriov/0/port")), "00:00:00:00:00:00:00:00\n");
  EXPECT_NE(read_file(host.pci(kPf, "sriov/1/port")), "00:00:00:00:00:00:00:00\n");
  // Two probes each: the seed's and the rebind that makes the GUID take effect.
  EXPECT_EQ(host.probes().size(), 4u);
  const auto writes = host.writes();
  EXPECT_EQ(std::count_if(
                writes.begin(), writes.end(),
                [](const std::string& w) { return w.find("sriov_numvfs") != std::string::npos; }),
            1)
      << "the count was right: no sriov_numvfs write but the seed's";
}

TEST(VfreadydConvergence, NeverResetsAVfCountWhileAVfIsInUse) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  ASSERT_EQ(sh("echo 2 > " + host.pci(kPf, "sriov_numvfs")).exit_code, 0);
  // A pod takes VF 0 once udev has named it: its netdev moves into the pod's namespace.
  ASSERT_TRUE(host.has_link("ibp24s0v0", 30s)) << "udev did not name VF 0\n" << host.state();
  const auto pod = host.netns() + "-pod";
  ASSERT_EQ(
      sh("ip netns add " + pod + " && ip -n " + host.netns() + " link set ibp24s0v0 netns " + pod)
          .exit_code,
      0);
  ASSERT_TRUE(wait_until([&] { return !exists(host.pci("0000:18:00.1", "net/ibp24s0v0")); }, 2s));
  const auto writes_before = host.writes().size();
  auto r = sh(vfreadyd_command(host, write_config(host, one_pf_config(4))), 60s);
  // The VF's removal would have taken its netdev from the pod (the fake host's driver
  // unregisters it wherever it is).
  EXPECT_EQ(sh("ip -n " + pod + " link show ibp24s0v0").exit_code, 0) << "the pod lost its netdev";
  sh("ip netns del " + pod);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("has 2 VFs, 4 configured"));
  EXPECT_THAT(r.err, HasSubstr("VF 0000:18:00.1: its netdev is in another network namespace"));
  EXPECT_EQ(read_file(host.pci(kPf, "sriov_numvfs")), "2\n");
  for (std::size_t i = writes_before; i < host.writes().size(); ++i) {
    EXPECT_THAT(host.writes()[i], Not(HasSubstr("sriov_numvfs"))) << "a VF in use was destroyed";
  }
}

TEST(VfreadydConvergence, LeavesAVfBoundToVfioAloneAndItsCountToo) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  ASSERT_EQ(sh(vfreadyd_command(host, write_config(host, one_pf_config(2)))).exit_code, 0);
  // A VM takes VF 1 as an operator would: unbind, driver_override, bind to vfio-pci.
  const std::string vf = "0000:18:00.2";
  ASSERT_EQ(sh("echo " + vf + " > " + host.sys("bus/pci/drivers/mlx5_core/unbind") +
               " && echo vfio-pci > " + host.pci(vf, "driver_override") + " && echo " + vf + " > " +
               host.sys("bus/pci/drivers/vfio-pci/bind"))
                .exit_code,
            0);
  const auto writes_before = host.writes().size();
  // The same count: the VF is in use, the rest ready; nothing is written to it.
  auto same = sh(vfreadyd_command(host, write_config(host, one_pf_config(2)), "--once"), 60s);
  EXPECT_EQ(same.exit_code, 0) << same.err;
  EXPECT_THAT(same.out, testing::ContainsRegex("0000:18:00.2 .*in use"));
  // Another count would destroy it: refused, naming the driver.
  auto more = sh(vfreadyd_command(host, write_config(host, one_pf_config(4)), "--once"), 60s);
  EXPECT_EQ(more.exit_code, 1);
  EXPECT_THAT(more.err, HasSubstr("VF 0000:18:00.2: bound to vfio-pci"));
  for (std::size_t i = writes_before; i < host.writes().size(); ++i) {
    EXPECT_THAT(host.writes()[i], Not(HasSubstr(vf))) << "a write touched the VF in use";
    EXPECT_THAT(host.writes()[i], Not(HasSubstr("sriov_numvfs"))) << "a VF in use was destroyed";
  }
  EXPECT_EQ(sh("readlink " + host.pci(vf, "driver")).out, "../../../bus/pci/drivers/vfio-pci\n");
}

TEST(VfreadydConvergence, LeavesANameHeldByAForeignDeviceAndReportsIt) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  ASSERT_EQ(sh("ip -n " + host.netns() + " link add ibs0v1 type ifb").exit_code, 0);
  auto r = sh(vfreadyd_command(host, write_config(host, one_pf_config(2))), 60s);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("name ibs0v1 is held by ibs0v1"));
  EXPECT_THAT(r.err, HasSubstr("which vfready does not manage: left alone"));
  EXPECT_THAT(host.links(), Contains("ibs0v0"));
  EXPECT_THAT(host.links(), Contains("ibp24s0v1")) << "the VF keeps its kernel name";
  EXPECT_THAT(host.links(), Contains("ibs0v1")) << "the foreign device keeps its name";
}

// A new VF's name and MTU go in one request; when the name is taken that request fails
// as a whole, and the MTU is set on its own: the VF gets every part that can be had.
TEST(VfreadydConvergence, SetsTheMtuOfAVfWhoseNameIsTakenOnItsOwn) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  ASSERT_EQ(sh("ip -n " + host.netns() + " link add ibs0v1 type ifb").exit_code, 0);
  const std::string config = R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 2,
      "vf_name": "ibs0v{vf}", "mtu": 2044}]})";
  auto r = sh(vfreadyd_command(host, write_config(host, config)), 60s);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("name ibs0v1 is held by ibs0v1"));
  const auto mtu = [&](const std::string& dev) {
    const auto out = sh("ip -n " + host.netns() + " -j link show dev " + dev).out;
    const auto j = nlohmann::json::parse(out, nullptr, false);
    return j.is_array() && !j.empty() ? j[0].value("mtu", 0) : -1;
  };
  EXPECT_EQ(mtu("ibs0v0"), 2044) << "named and sized in one request";
  EXPECT_EQ(mtu("ibp24s0v1"), 2044) << "its name taken, its MTU set all the same";
  EXPECT_NE(mtu("ibs0v1"), 2044) << "the foreign device is left alone";
}

TEST(VfreadydConvergence, SwapsNamesBetweenItsOwnVfs) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  ASSERT_EQ(sh(vfreadyd_command(host, write_config(host, one_pf_config(2))), 60s).exit_code, 0);
  // Someone swapped the two VFs' names.
  const auto ns = "ip -n " + host.netns() + " link set ";
  ASSERT_EQ(
      sh(ns + "ibs0v0 name tmp0 && " + ns + "ibs0v1 name ibs0v0 && " + ns + "tmp0 name ibs0v1")
          .exit_code,
      0);
  auto r = sh(vfreadyd_command(host, write_config(host, one_pf_config(2))), 60s);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto name_of = [&](const char* vf) { return sh("ls " + host.pci(vf, "net")).out; };
  EXPECT_TRUE(wait_until([&] { return name_of("0000:18:00.1") == "ibs0v0\n"; }, 1s));
  EXPECT_TRUE(wait_until([&] { return name_of("0000:18:00.2") == "ibs0v1\n"; }, 1s));
}

TEST(VfreadydOutcome, SignalsReadyWhenDegradedIfADropInSaysSo) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.function("0000:40:00.0")["faults"] = {{"numvfs_errno", "EIO"}};
  FakeHost host(t);
  const auto config = write_degraded_ready_config(host);
  NotifySocket notify;
  auto r = sh(vfreadyd_command(host, config, "--once", notify.path()), 120s);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(notify.wait_for("READY=1", 5s));
  EXPECT_THAT(notify.received(), Contains(HasSubstr("STATUS=degraded: 7/8 PFs ready")));
}

namespace {

// PF `pci`'s row in the status file, {} while there is none.
nlohmann::json pf_row(const FakeHost& host, const std::string& pci) {
  const auto text = read_file(host.root() + "/run/vfready/status.json");
  const auto status = nlohmann::json::parse(text, nullptr, false);
  if (status.is_discarded()) {
    return {};
  }
  for (const auto& pf : status.value("pfs", nlohmann::json::array())) {
    if (pf.value("pci", "") == pci) {
      return pf;
    }
  }
  return {};
}

}  // namespace

// Another tool removes a PF's VFs after READY=1, and unbinds its driver while the
// repair's pass probes the new ones: the VFs go with it. The PF's row then says why
// (pf-no-driver) and lists no VF ready, and the other PFs stay ready.
TEST(VfreadydConvergence, APfUnboundWhileItsPassRunsEndsFailedForWantOfItsDriver) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(100));
  ServiceDaemon daemon(host, repo_config(), "--no-bus");
  ASSERT_TRUE(daemon.notify().wait_for("READY=1", 120s)) << daemon.log();
  const auto probed = [&] {
    const auto probes = host.probes();
    return std::count_if(probes.begin(), probes.end(), [](const std::string& l) {
      return l.find("0000:18:0") != std::string::npos;
    });
  };
  const auto before = probed();
  ASSERT_EQ(sh("echo 0 > " + host.pci(kPf, "sriov_numvfs")).exit_code, 0);
  ASSERT_TRUE(wait_until([&] { return probed() > before; }, 30s)) << daemon.log();
  ASSERT_EQ(sh("echo " + std::string(kPf) + " > " + host.sys("bus/pci/drivers/mlx5_core/unbind"))
                .exit_code,
            0);
  const auto failed_for_its_driver = [&] {
    const auto pf = pf_row(host, kPf);
    return pf.value("state", "") == "failed" &&
           pf.dump().find("\"pf-no-driver\"") != std::string::npos;
  };
  EXPECT_TRUE(wait_until(failed_for_its_driver, 30s)) << pf_row(host, kPf).dump(1) << "\n"
                                                      << daemon.log();
  for (const auto& vf : pf_row(host, kPf).value("vfs", nlohmann::json::array())) {
    EXPECT_NE(vf.value("state", ""), "ready") << vf.dump();
  }
  EXPECT_EQ(pf_row(host, "0000:40:00.0").value("state", ""), "ready");
  EXPECT_EQ(daemon.stop(), 0);
}
