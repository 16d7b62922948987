// SPDX-License-Identifier: Apache-2.0
// Each fault of the fake host gives its outcome for its PF only, with a message that
// names it, while the other PFs come up.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "daemon_run.hpp"
#include "notify_socket.hpp"
#include "root_only.hpp"
#include "service_daemon.hpp"

using namespace vfready::testing;
using testing::Contains;
using testing::HasSubstr;
using testing::Not;

namespace {

constexpr const char* kFaulty = "0000:40:00.0";

// Runs vfreadyd --once; the fault must fail PF 0000:40:00.0 (ibs1) only, and with
// outcome "degraded" READY=1 must not be sent (the config says "fail"; "": the reference
// config with a drop-in that says so).
void expect_scoped_failure(const TopologyBuilder& topology, const std::string& message,
                           std::string config = "") {
  FakeHost host(topology);
  if (config.empty()) {
    config = write_degraded_fail_config(host);
  }
  NotifySocket notify;
  auto r = sh(vfreadyd_command(host, config, "--once", notify.path()), 120s);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(message));
  EXPECT_THAT(r.out, testing::ContainsRegex("0000:40:00.0 +[-a-z0-9]+ +failed"));
  EXPECT_THAT(r.out, testing::ContainsRegex("0000:18:00.0 +ibs0 +ready"));
  EXPECT_THAT(r.out, testing::ContainsRegex("0000:dc:00.0 +ibs7 +ready"));
  EXPECT_THAT(r.out, HasSubstr("State: degraded"));
  // The outcome is the last datagram: once it is in, READY=1 would be too.
  EXPECT_TRUE(notify.wait_for("STATUS=degraded: 7/8 PFs ready", 5s));
  EXPECT_THAT(notify.received(), Not(Contains(HasSubstr("READY=1"))));
}

// failing_config_text() with these timeouts (a JSON object's members, e.g.
// `"bind_ms": 500`), written into `host`: the config file's path.
std::string failing_config_with_timeouts(FakeHost& host, const std::string& timeouts) {
  auto text = failing_config_text();
  text.replace(text.rfind('}'), 1, R"(, "timeouts": {)" + timeouts + "}}");
  return write_config(host, text);
}

// A --once run in which PF 0000:40:00.0 alone is stuck (`what`: its call, named in the
// stuck line) and the others come up: the run ends, degraded.
void expect_stuck_alone(const CommandResult& r, const std::string& what) {
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("PF 0000:40:00.0 is stuck: "));
  EXPECT_THAT(r.err, HasSubstr(what));
  EXPECT_THAT(r.out, testing::ContainsRegex("0000:40:00.0 +[-a-z0-9]+ +stuck"));
  EXPECT_THAT(r.out, testing::ContainsRegex("0000:18:00.0 +ibs0 +ready"));
  EXPECT_THAT(r.out, HasSubstr("State: degraded"));
}

}  // namespace

TEST(VfreadydFault, ProbeFailureOfAVfFailsItsPfOnly) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.function(kFaulty)["faults"] = {{"probe_fail_vfs", {2}}};
  // drivers_probe said nothing of it: the VF's driver and the kernel log do (its latest
  // lines naming the VF: mlx5's first line of the probe, then the driver core's).
  expect_scoped_failure(t,
                        "VF 0000:40:00.3 is not bound to mlx5_core after its probe; the kernel "
                        "log says: \"mlx5_core 0000:40:00.3: firmware version: 28.43.1014\" "
                        "\"mlx5_core: probe of 0000:40:00.3 failed with error -5\"");
}

TEST(VfreadydFault, NumvfsErrnoIsReportedByName) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.function(kFaulty)["faults"] = {{"numvfs_errno", "EIO"}};
  expect_scoped_failure(t, "writing 8 to sriov_numvfs of PF 0000:40:00.0 failed with EIO");
}

TEST(VfreadydFault, AHungNumvfsWriteLeavesItsPfStuckAndARunAfterItEndsToo) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.function(kFaulty)["faults"] = {{"numvfs_write_hangs", true}};
  FakeHost host(t);
  const auto config =
      failing_config_with_timeouts(host, R"("numvfs_ms": 500, "device_call_ms": 500)");
  // The first run's helper stays in the write; the second run's read of sriov_numvfs
  // waits behind it, in a helper of its own, until its bound.
  for (const char* run : {"first", "second"}) {
    SCOPED_TRACE(run);
    expect_stuck_alone(sh(vfreadyd_command(host, config, "--once"), 60s),
                       "did not return within 500 ms");
    // The first run turned autoprobe off for the VFs it was making; the PF stuck in that
    // write, it stays off: the VFs the write makes when it returns wait unbound.
    EXPECT_EQ(read_file(host.pci(kFaulty, "sriov_drivers_autoprobe")), "0\n");
  }
  EXPECT_THAT(host.writes(), Contains(HasSubstr("0000:40:00.0/sriov_drivers_autoprobe 0")));
}

// Firmware that never answers a VF's GUID write: the call holding VF 1's files (with
// VFs 2-4's, one call) outlives its bound, and the PF is stuck, named by the call; the
// run ends, the other PFs ready.
TEST(VfreadydFault, AHungGuidWriteLeavesItsPfStuckAndTheRunEnds) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.function(kFaulty)["faults"] = {{"guid_write_hang_vfs", {1}}};
  FakeHost host(t);
  const auto config = failing_config_with_timeouts(host, R"("device_call_ms": 500)");
  expect_stuck_alone(sh(vfreadyd_command(host, config, "--once"), 60s), "sriov/1/node");
}

// Firmware that never answers a VF's probe: the probe outlives bind_ms, and the PF is
// stuck, named by the call; the run ends, the other PFs ready. Once the driver recovers
// (SIGUSR1: the probe returns) the next run finds the PF's VFs and brings it up.
TEST(VfreadydFault, AHungProbeLeavesItsPfStuckUntilTheDriverRecovers) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.function(kFaulty)["faults"] = {{"probe_hang_vfs", {2}}};
  FakeHost host(t);
  const auto config = failing_config_with_timeouts(host, R"("bind_ms": 500)");
  const auto r = sh(vfreadyd_command(host, config, "--once"), 60s);
  expect_stuck_alone(r, "drivers_probe");
  EXPECT_THAT(r.err, HasSubstr("did not return within 500 ms"));
  // The VFs before it are ready; it and the ones after it were not judged.
  EXPECT_THAT(r.out, testing::ContainsRegex("VF 1 +0000:40:00.2 +ibs1v1 +[0-9a-f:]+ ok"));
  for (const char* vf : {"VF 2 +0000:40:00.3", "VF 7 +0000:40:01.0"}) {
    EXPECT_THAT(r.out, testing::ContainsRegex(std::string(vf) + " +- +- +unchecked")) << vf;
  }

  // Restarted while the probe still hangs: the new daemon's own probe of that VF waits
  // behind it and the PF is stuck again; the VFs it did not get to judge are listed with
  // what sysfs shows of them (the bound ones' netdevs and GUIDs), not as nothing known.
  const auto restarted = sh(vfreadyd_command(host, config, "--once"), 60s);
  EXPECT_FALSE(restarted.timed_out);
  EXPECT_EQ(restarted.exit_code, 1) << restarted.err;
  EXPECT_THAT(restarted.out, testing::ContainsRegex("0000:40:00.0 +[-a-z0-9]+ +stuck"));
  EXPECT_THAT(restarted.out,
              testing::ContainsRegex("VF 1 +0000:40:00.2 +ibs1v1 +06:[0-9a-f:]+ +unchecked"))
      << restarted.out;
  // An unbound VF: no netdev, and the zero GUID OFED's files showed.
  EXPECT_THAT(restarted.out,
              testing::ContainsRegex("VF 7 +0000:40:01.0 +- +00:00:00:00:00:00:00:00 +unchecked"));

  ASSERT_EQ(::kill(host.pid(), SIGUSR1), 0);  // the driver recovers: the probe returns
  const auto again = sh(vfreadyd_command(host, config, "--once"), 60s);
  EXPECT_FALSE(again.timed_out);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.out, testing::ContainsRegex("0000:40:00.0 +[-a-z0-9]+ +ready"));
  EXPECT_THAT(again.out, HasSubstr("State: ready"));
}

// Firmware that never answers the query of a VF's GID 0 (OFED's sriov/2/port): the
// probe's read-back outlives device_call_ms and the PF is stuck, named by that read; the
// run ends, the other PFs ready. A restart meanwhile finds it stuck in the host's read of
// the VFs' GUIDs. Once the firmware answers (SIGUSR1) the next run brings it up.
TEST(VfreadydFault, AHungPortGuidReadLeavesItsPfStuckUntilTheFirmwareAnswers) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.function(kFaulty)["faults"] = {{"port_read_hang_vfs", {2}}};
  FakeHost host(t);
  const auto config = failing_config_with_timeouts(host, R"("device_call_ms": 500)");
  const auto r = sh(vfreadyd_command(host, config, "--once"), 60s);
  expect_stuck_alone(r, "read of /sys/bus/pci/devices/0000:40:00.0/sriov/2/port");
  EXPECT_THAT(r.err, HasSubstr("did not return within 500 ms"));
  EXPECT_THAT(r.out, testing::ContainsRegex("VF 1 +0000:40:00.2 +ibs1v1 +[0-9a-f:]+ ok"));
  EXPECT_THAT(r.out, testing::ContainsRegex("VF 2 +0000:40:00.3 +- +- +unchecked"));

  // The host's read of the VFs' GUIDs is one call, named by its first reads.
  const auto restarted = sh(vfreadyd_command(host, config, "--once"), 60s);
  expect_stuck_alone(restarted, "read of /sys/bus/pci/devices/0000:40:00.0/sriov/0/node");

  ASSERT_EQ(::kill(host.pid(), SIGUSR1), 0);  // the firmware answers: the reads return
  const auto again = sh(vfreadyd_command(host, config, "--once"), 60s);
  EXPECT_FALSE(again.timed_out);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.out, testing::ContainsRegex("VF 2 +0000:40:00.3 +ibs1v2 +[0-9a-f:]+ ok"));
  EXPECT_THAT(again.out, HasSubstr("State: ready"));
}

// The same query failing (EIO): the VF was probed, but whether it carries its GUID is
// not known, so it is not called ready; its PF fails, the others come up.
TEST(VfreadydFault, AFailedPortGuidReadFailsItsPfOnly) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.function(kFaulty)["faults"] = {{"port_read_fail_vfs", {2}}};
  expect_scoped_failure(t,
                        "could not read what the probe of VF 0000:40:00.3 did, the GUID its port "
                        "took (OFED's sriov/2/port): Input/output error (EIO)");
}

// A VF whose netdev is gone before udev handled it, udev's add for it coming after (udevd
// behind): vfreadyd renames by the announced ifindex, finds no link, and looks in sysfs,
// where bound with no netdev is what a pod's VF looks like; vfready never disturbs a VF
// in use. The VF is left alone as in use (probed once, never unbound), the rename that
// found no link is not counted, the PF is ready.
TEST(VfreadydFault, AVfWhoseAnnouncedNetdevIsGoneIsLeftAloneAsInUse) {
  VFREADY_REQUIRE_ROOT();
  const auto netlink_requests = [](const CommandResult& r) {
    return logged_kernel_calls(r.err, "since start")["netlink requests"];
  };
  auto t = TopologyBuilder::reference().probe_ms(1);
  uint64_t clean = 0;  // the same bring-up without the fault
  {
    FakeHost host(t);
    const auto r = sh(vfreadyd_command(host, repo_config(), "--once"), 60s);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    clean = netlink_requests(r);
  }
  t.function(kFaulty)["faults"] = {{"netdev_gone_vfs", {3}}};
  FakeHost host(t);
  const auto r = sh(vfreadyd_command(host, repo_config(), "--once"), 60s);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, testing::ContainsRegex("0000:40:00.0 +ibs1 +ready"));
  EXPECT_THAT(r.out, testing::ContainsRegex("VF 3 +0000:40:00.4 +- +[0-9a-f:]+ in use"));
  EXPECT_THAT(r.out, testing::ContainsRegex("VF 4 +0000:40:00.5 +ibs1v4 +[0-9a-f:]+ ok"));
  // 8 PFs and 63 VFs: the rename that found no link is not counted.
  EXPECT_THAT(r.out, HasSubstr("64 VFs created, 64 GUIDs set, 71 links renamed"));
  // The announced ifindex was asked of the kernel: the rename, and the look at what it
  // is, as many requests as the clean run's VF 3 cost (its rename, its altname); a VF
  // found only in sysfs would have cost none.
  EXPECT_GE(netlink_requests(r), clean) << r.err;
  const auto probes = host.probes();
  EXPECT_EQ(std::count_if(probes.begin(), probes.end(),
                          [](const std::string& p) { return p.starts_with("0000:40:00.4 "); }),
            1)
      << testing::PrintToString(probes);
  for (const auto& w : host.writes()) {
    EXPECT_THAT(w, Not(testing::AllOf(HasSubstr("unbind"), HasSubstr("0000:40:00.4"))));
  }
}

TEST(VfreadydFault, APfWhoseDriverMadeNoNetdevOrRdmaDeviceGetsNoWrite) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  // mlx5 after a firmware fatal error: bound, but neither netdev nor RDMA device.
  t.function(kFaulty).erase("netdev");
  t.function(kFaulty).erase("infiniband");
  // The reference configuration selects PFs by address: the sick one is still configured.
  expect_scoped_failure(t,
                        "PF 0000:40:00.0 has driver mlx5_core bound but neither a netdev "
                        "nor an RDMA device");
  FakeHost host(t);
  sh(vfreadyd_command(host, repo_config(), "--once"), 60s);
  for (const auto& w : host.writes()) {
    EXPECT_THAT(w, Not(HasSubstr("0000:40:00.0/sriov_numvfs"))) << "a write into a sick driver";
  }
}

TEST(VfreadydFault, AKernelLogLineNamingAPfsFailedProbeFailsThatPf) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.json()["kernel_log"] = {
      "mlx5_core 0000:40:00.0: probe_one:1762:(pid 5): mlx5_init_one failed with error code "
      "-110"};
  expect_scoped_failure(t, "the driver failed to probe PF 0000:40:00.0");
}

TEST(VfreadydFault, EthernetFallbackNamesTheMlxconfigRemedy) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.function(kFaulty)["infiniband"]["ports"][0]["link_layer"] = "Ethernet";
  expect_scoped_failure(t, "mlxconfig -d 0000:40:00.0 set LINK_TYPE_P1=1");
}

TEST(VfreadydFault, OldFirmwareIsReportedWithTheMinimum) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.function(kFaulty)["infiniband"]["fw_ver"] = "28.39.1002";
  expect_scoped_failure(t,
                        "firmware 28.39.1002 of PF 0000:40:00.0 (ConnectX-7) is older than "
                        "the required 28.43.1014");
}

TEST(VfreadydFault, APortNotActiveWithinItsTimeoutFailsItsPf) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.function(kFaulty)["infiniband"]["ports"][0]["state"] = "1: DOWN";
  FakeHost dir_only(TopologyBuilder::reference());  // only for write_config's directory
  auto config = failing_config_text();
  config.replace(config.rfind('}'), 1, R"(, "timeouts": {"port_active_ms": 300}})");
  expect_scoped_failure(t, "port 1 of PF 0000:40:00.0 is \"1: DOWN\", not ACTIVE after 300 ms",
                        write_config(dir_only, config));
}

// ib_query_port() failing (firmware in an error state): the port's state cannot be read,
// and its PF fails, named by the read and its errno, before any write.
TEST(VfreadydFault, APortWhoseStateCannotBeReadFailsItsPfBeforeAnyWrite) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.function(kFaulty)["faults"] = {{"port_state_errno", "EIO"}};
  FakeHost host(t);
  const auto r = sh(vfreadyd_command(host, write_degraded_fail_config(host), "--once"), 120s);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("reading port 1 of PF 0000:40:00.0 (mlx5_3) failed: "
                               "Input/output error (EIO): the driver cannot query the port"));
  EXPECT_THAT(r.out, testing::ContainsRegex("0000:40:00.0 +[-a-z0-9]+ +failed"));
  EXPECT_THAT(r.out, testing::ContainsRegex("0000:18:00.0 +ibs0 +ready"));
  EXPECT_THAT(host.writes(), Not(Contains(HasSubstr("0000:40:00.0/sriov"))));
  EXPECT_THAT(host.writes(), Contains(HasSubstr("0000:18:00.0/sriov_numvfs 8 0")));
}

// A firmware command that never answers holds the read of a port's state: its PF is stuck,
// named by that read, the others ready; once the firmware answers, the next run brings it up.
TEST(VfreadydFault, AHungPortStateReadLeavesItsPfStuckUntilTheFirmwareAnswers) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.function(kFaulty)["faults"] = {{"port_state_hangs", true}};
  FakeHost host(t);
  const auto config = failing_config_with_timeouts(host, R"("device_call_ms": 500)");
  const auto r = sh(vfreadyd_command(host, config, "--once"), 60s);
  expect_stuck_alone(r, "PF 0000:40:00.0 is stuck: read of ");
  EXPECT_THAT(r.err, HasSubstr("mlx5_3/ports/1/state"));
  EXPECT_THAT(r.err, HasSubstr("did not return within 500 ms"));
  EXPECT_THAT(host.writes(), Not(Contains(HasSubstr("0000:40:00.0/sriov"))));
  ASSERT_EQ(::kill(host.pid(), SIGUSR1), 0);  // the firmware answers
  const auto again = sh(vfreadyd_command(host, config, "--once"), 60s);
  EXPECT_FALSE(again.timed_out);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.out, testing::ContainsRegex("0000:40:00.0 +[-a-z0-9]+ +ready"));
}

// A PF no entry can select is read only for the names it holds, with no device call: a
// firmware command of its that never answers holds up no bring-up. (Read whole, its
// port's state would wait out the call's bound, here far beyond the run's.)
// The repository's config with device calls bounded far beyond a run's 60 s.
std::string config_with_long_device_calls(FakeHost& host) {
  auto text = read_file(repo_config());
  text.replace(text.rfind('}'), 1, R"(, "timeouts": {"device_call_ms": 600000}})");
  return write_config(host, text);
}

// A --once run that the hung call of a PF it does not manage did not hold: it ended
// within its bound, every PF ready, none stuck.
void expect_held_up_by_nothing(const CommandResult& r) {
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, testing::ContainsRegex("0000:18:00.0 +ibs0 +ready"));
  EXPECT_THAT(r.err, Not(HasSubstr("stuck")));
}

TEST(VfreadydFault, APfItDoesNotManageWhosePortStateHangsHoldsNothingUp) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.function("0000:29:00.0")["faults"] = {{"port_state_hangs", true}};
  FakeHost host(t);
  expect_held_up_by_nothing(
      sh(vfreadyd_command(host, config_with_long_device_calls(host), "--once"), 60s));
}

// A firmware command that never answers holds the read of one managed PF's port: each
// PF's pass reads its own port's state, so the other seven make their VFs while that
// read waits out its bound (ten minutes here). Read with the plan, it held every PF.
TEST(VfreadydFault, AHungPortStateReadHoldsUpNoOtherPf) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.function(kFaulty)["faults"] = {{"port_state_hangs", true}};
  FakeHost host(t);
  ServiceDaemon daemon(host, config_with_long_device_calls(host), "--no-bus");
  const auto numvfs_written = [&] {
    std::set<std::string> pfs;
    for (const auto& w : host.writes()) {
      const auto at = w.find("/sriov_numvfs 8 0");
      if (at != std::string::npos && at >= 12) {
        pfs.insert(w.substr(at - 12, 12));
      }
    }
    return pfs;
  };
  EXPECT_TRUE(wait_until([&] { return numvfs_written().size() == 7; }, 60s))
      << testing::PrintToString(numvfs_written()) << daemon.log();
  EXPECT_FALSE(numvfs_written().contains(kFaulty));
  EXPECT_THAT(daemon.log(), Not(HasSubstr("stuck")));
  ASSERT_EQ(::kill(host.pid(), SIGUSR1), 0);  // the firmware answers: the PF comes up too
  EXPECT_TRUE(daemon.notify().wait_for("READY=1", 60s)) << daemon.log();
  EXPECT_EQ(daemon.stop(), 0);
}

// Another tool's sriov_numvfs write that hangs on a storage NIC holds its device lock,
// and a read of its sriov_numvfs with it: vfready counts that PF's VFs by their links.
TEST(VfreadydFault, APfItDoesNotManageWhoseNumvfsWriteHangsHoldsNothingUp) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.function("0000:29:00.0")["faults"] = {{"numvfs_write_hangs", true}};
  FakeHost host(t);
  const auto writer = sh("sh -c 'echo 2 > " + host.pci("0000:29:00.0", "sriov_numvfs") +
                         "' </dev/null >/dev/null 2>&1 & echo $!");
  ASSERT_EQ(writer.exit_code, 0) << writer.err;
  const auto pid = std::stoi(writer.out);
  // In write(2) (system call 1), where the fake host holds it until it ends.
  ASSERT_TRUE(wait_until(
      [&] { return read_file("/proc/" + std::to_string(pid) + "/syscall").starts_with("1 "); },
      10s));
  expect_held_up_by_nothing(
      sh(vfreadyd_command(host, config_with_long_device_calls(host), "--once"), 60s));
}

TEST(VfreadydFault, AMissingPfFailsOnlyItself) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  auto& functions = t.json()["functions"];
  functions.erase(std::remove_if(functions.begin(), functions.end(),
                                 [](const nlohmann::json& f) { return f["pci"] == kFaulty; }),
                  functions.end());
  expect_scoped_failure(t, "PF 0000:40:00.0 is not on this host");
}

TEST(VfreadydDriverCheck, StopsBeforeAnyWriteOnAnUnknownSymbol) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference();
  t.json()["kernel_log"].push_back("mlx5_core: Unknown symbol strlcpy (err -2)");
  FakeHost host(t);
  NotifySocket notify;
  auto r = sh(vfreadyd_command(host, repo_config(), "--once", notify.path()), 60s);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("module mlx5_core does not fit the running kernel"));
  EXPECT_THAT(r.err, HasSubstr("strlcpy"));
  EXPECT_TRUE(host.writes().empty());
  EXPECT_TRUE(notify.wait_for("STATUS=Driver check failed", 5s));
  EXPECT_THAT(notify.received(), Not(Contains(HasSubstr("READY=1"))));
}

// A driver check that fails judges no PF: the kernel log's lines that name a selected PF
// or one of its VFs are the node's problems, in the status beside the check's own.
TEST(VfreadydDriverCheck, ShowsTheLogLinesOfSelectedPfsAndVfsWhenItFailsBeforeAnyPf) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference();
  t.json()["kernel_log"].push_back("mlx5_core: Unknown symbol strlcpy (err -2)");
  t.json()["kernel_log"].push_back(
      "mlx5_core 0000:40:00.0: mlx5_function_setup failed with error -110");
  t.json()["kernel_log"].push_back("mlx5_core 0000:29:00.0: mlx5_function_setup failed, not ours");
  FakeHost host(t);
  auto r = sh(vfreadyd_command(host, repo_config(), "--once"), 60s);
  EXPECT_EQ(r.exit_code, 1);
  const auto status = nlohmann::json::parse(read_file(host.root() + "/run/vfready/status.json"));
  std::string problems;
  for (const auto& p : status["problems"]) {
    problems += p.get<std::string>() + "\n";
  }
  EXPECT_THAT(problems, HasSubstr("module mlx5_core does not fit the running kernel"));
  EXPECT_THAT(problems, HasSubstr("the kernel log names PF 0000:40:00.0: \"mlx5_core 0000:40:00.0: "
                                  "mlx5_function_setup failed with error -110\""));
  EXPECT_THAT(problems, Not(HasSubstr("0000:29:00.0"))) << "an Ethernet function not selected";
  EXPECT_TRUE(host.writes().empty());
}

TEST(VfreadydDriverCheck, StopsBeforeAnyWriteWhenAModuleIsStillMissingAfterItsWait) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference();
  t.json()["modules"].erase("mlx5_ib");
  FakeHost host(t);
  NotifySocket notify;
  auto text = read_file(repo_config());
  text.replace(text.rfind('}'), 1, R"(, "timeouts": {"modules_ms": 300}})");
  auto r = sh(vfreadyd_command(host, write_config(host, text), "", notify.path()), 60s);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(notify.wait_for("STATUS=Waiting up to 300 ms for modules to load: mlx5_ib", 5s));
  EXPECT_THAT(r.err, HasSubstr("module mlx5_ib is not loaded"));
  EXPECT_TRUE(host.writes().empty());
}

// Evidence over waiting: a required module the kernel log already shows failing to load
// (an unknown symbol: built for another kernel) is not waited for timeouts.modules_ms
// (30 s here); the driver check fails at once with the line.
TEST(VfreadydDriverCheck, EndsItsWaitAtOnceWhenTheLogShowsAModuleFailedToLoad) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference();
  t.json()["modules"].erase("mlx5_ib");
  t.json()["kernel_log"] = {"mlx5_ib: Unknown symbol ib_umem_get_peer (err -2)"};
  FakeHost host(t);
  NotifySocket notify;
  // Bounded well below the 30 s wait: a run that waited is killed and fails here.
  auto r = sh(vfreadyd_command(host, repo_config(), "", notify.path()), 10s);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("mlx5_ib: Unknown symbol ib_umem_get_peer (err -2)"));
  EXPECT_THAT(notify.received(), Not(Contains(HasSubstr("Waiting up to"))));
  EXPECT_TRUE(host.writes().empty());
}

// mlx5_core does not fit the kernel (an unknown symbol) and its probe failed on a
// function: mlx5_ib and ib_ipoib, which need it, never load. The wait for them ends at
// once (not after timeouts.modules_ms, 10 min here), and every failed probe of the driver
// the log shows is named by its function, selected or not.
TEST(VfreadydDriverCheck, EndsItsWaitForModulesThatNeedAModuleThatDoesNotFit) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference();
  t.json()["modules"].erase("mlx5_ib");
  t.json()["modules"].erase("ib_ipoib");
  t.json()["kernel_log"] = {"mlx5_core: Unknown symbol strlcpy (err -2)",
                            "mlx5_core: probe of 0000:aa:00.0 failed with error -22",
                            "mlx5_core: probe of 0000:40:00.0 failed with error -22"};
  FakeHost host(t);
  NotifySocket notify;
  auto text = read_file(repo_config());
  text.replace(text.rfind('}'), 1, R"(, "timeouts": {"modules_ms": 600000}})");
  // Bounded far below the 10 min wait: a run that waited is killed and fails here.
  auto r = sh(vfreadyd_command(host, write_config(host, text), "", notify.path()), 60s);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(notify.received(), Not(Contains(HasSubstr("Waiting up to"))));
  EXPECT_THAT(r.err, HasSubstr("module mlx5_core does not fit the running kernel"));
  EXPECT_THAT(r.err, HasSubstr("mlx5_core failed to probe 0000:aa:00.0 (not selected)"));
  EXPECT_THAT(r.err, HasSubstr("the kernel log names PF 0000:40:00.0"));
  EXPECT_TRUE(host.writes().empty());
}

TEST(VfreadydDriverCheck, WaitsForARequiredModuleADriverLoaderIsStillLoading) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.json()["modules"]["ib_ipoib"] = {{"loads_on_signal", true}};
  FakeHost host(t);
  ServiceDaemon daemon(host, repo_config(), "--no-bus");
  ASSERT_TRUE(
      daemon.notify().wait_for("STATUS=Waiting up to 30000 ms for modules to load: ib_ipoib", 20s))
      << daemon.log();
  EXPECT_TRUE(host.writes().empty()) << "nothing is written before the driver is there";
  ASSERT_EQ(::kill(host.pid(), SIGUSR1), 0);  // the loader finishes
  EXPECT_TRUE(daemon.notify().wait_for("READY=1", 30s)) << daemon.log();
}

TEST(VfreadydFault, NetlinkGuidsOnANonIpoibNetdevFailThatPfWithEopnotsupp) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  // No OFED sriov sysfs: GUIDs go through netlink on the PF's netdev, an ifb here.
  t.function(kFaulty)["infiniband"]["ofed_sriov_sysfs"] = false;
  expect_scoped_failure(t,
                        "through netlink on ibp64s0 failed: Operation not supported (EOPNOTSUPP)");
}

TEST(VfreadydFault, ANetlinkPathPfWhoseGuidsCannotBeSetIsNeverReadyBeforeOrAfterARestart) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.function(kFaulty)["infiniband"]["ofed_sriov_sysfs"] = false;
  FakeHost host(t);
  // The first run leaves the VFs bound with GUID 0; the second reads that back from
  // their RDMA devices, tries again, and fails again.
  for (const char* run : {"first", "second"}) {
    const auto r = sh(vfreadyd_command(host, write_degraded_fail_config(host), "--once"), 60s);
    EXPECT_EQ(r.exit_code, 1) << run << ": " << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr("failed: Operation not supported (EOPNOTSUPP)")) << run;
    EXPECT_THAT(r.out, testing::ContainsRegex("0000:40:00.0 +[-a-z0-9]+ +failed")) << run;
    EXPECT_THAT(r.out, HasSubstr("State: degraded")) << run;
  }
  EXPECT_EQ(trimmed(read_file(host.pci("0000:40:00.1", "infiniband/mlx5_1100/ports/1/gids/0"))),
            "fe80:0000:0000:0000:0000:0000:0000:0000");
}

// A VF's GUID and its probe go to the driver in one call; a GUID write that fails
// stops that call, and the VF is probed all the same (a VF nobody probes has no netdev
// to report), named, and failed for its GUID.
TEST(VfreadydFault, AVfWhoseGuidWriteFailsIsProbedAndNamedAndFailsForItsGuid) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.function("0000:18:00.0")["faults"]["guid_write_fail_vfs"] = {1};
  FakeHost host(t);
  auto config = nlohmann::json::parse(read_file(repo_config()));
  config["pfs"][0]["select"]["pci"] = {"0000:18:00.0"};
  config["pfs"][0]["vfs"] = 3;
  auto r = sh(vfreadyd_command(host, write_config(host, config.dump())), 60s);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, testing::ContainsRegex("writing [0-9a-f:]+ to sriov/1/node of PF "
                                            "0000:18:00.0 failed: .*EIO"));
  for (const char* vf : {" ibp24s0v0 ibs0v0", " ibp24s0v1 ibs0v1", " ibp24s0v2 ibs0v2"}) {
    EXPECT_TRUE(host.renamed(vf)) << vf << testing::PrintToString(host.renames());
  }
  EXPECT_THAT(host.probes(), Contains(HasSubstr("0000:18:00.2"))) << "VF 1 was probed";
  // VF 1 named, its GUID unset and a problem; the others as asked. (VFs 1 and 2 have
  // their files written in one device call: VF 2's are written after the failure, alone.)
  EXPECT_THAT(r.out, testing::ContainsRegex("0000:18:00.2 +ibs0v1 +00:00:00:00:00:00:00:00 "
                                            "problem"));
  EXPECT_THAT(r.out, testing::ContainsRegex("0000:18:00.3 +ibs0v2 +[0-9a-f:]+ ok"));
  EXPECT_THAT(r.out, HasSubstr("3 VFs created, 2 GUIDs set"));
}

// vfready waits for udev's event per netdev (libudev), and reports one udev never
// finished with, within the configured bound.
TEST(VfreadydUdev, ReportsANetdevUdevDidNotFinishWithInItsBound) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1).udev_latency_ms(60000));
  auto config = nlohmann::json::parse(read_file(repo_config()));
  config["timeouts"] = {{"udev_ms", 300}};
  config["pfs"][0]["select"]["pci"] = {"0000:18:00.0"};
  config["pfs"][0]["vfs"] = 2;
  auto r = sh(vfreadyd_command(host, write_config(host, config.dump())), 60s);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  // The driver's name: udev names a netdev only as it handles its add.
  EXPECT_THAT(r.err, testing::ContainsRegex("udev did not finish with ib[0-9]+ \\(ifindex "
                                            "[0-9]+\\) within 300 ms"));
}

// udev's add of a netdev the pass made names it (ifindex, name): no listing of the VF's
// net/ and no netlink lookup. Without it (events lost, a udevd whose messages do not
// arrive) vfready looks in sysfs after a second (the netdev's name and ifindex), asks
// libudev whether udev is done, and naming asks netlink for the link before it changes
// it.
TEST(VfreadydUdev, FindsANetdevUdevNeverAnnouncedInSysfsAndAsksLibudev) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1).udev_silent());
  auto config = nlohmann::json::parse(read_file(repo_config()));
  config["pfs"][0]["select"]["pci"] = {"0000:18:00.0"};
  config["pfs"][0]["vfs"] = 2;
  const auto path = write_config(host, config.dump());
  auto r = sh(vfreadyd_command(host, path), 60s);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(host.renamed(" ibp24s0v0 ibs0v0")) << testing::PrintToString(host.renames());
  EXPECT_TRUE(host.renamed(" ibp24s0v1 ibs0v1")) << testing::PrintToString(host.renames());
  const auto silent = logged_kernel_calls(r.err, "since start");
  // Each VF's net/ listed and its ifindex read; udev asked for both.
  EXPECT_GE(silent.at("udev lookups"), 2U) << r.err;
  EXPECT_GE(silent.at("listings"), 2U) << r.err;

  // The same with udev's messages: none of that for the VFs' netdevs, and no read of each
  // before its naming either (the add says its name; the MTU goes with the rename).
  FakeHost announcing(TopologyBuilder::reference().probe_ms(1));
  r = sh(vfreadyd_command(announcing, write_config(announcing, config.dump())), 60s);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto heard = logged_kernel_calls(r.err, "since start");
  EXPECT_EQ(heard.at("udev lookups"), 0U) << r.err;
  EXPECT_EQ(heard.at("listings") + 2, silent.at("listings")) << r.err;
  EXPECT_EQ(heard.at("sysfs reads") + 2, silent.at("sysfs reads")) << r.err;
  EXPECT_EQ(heard.at("netlink requests") + 2, silent.at("netlink requests")) << r.err;
}

// udevd 250 on writes a netdev's database entry with ID_RENAMING=1 just before its own
// rename, and drops the flag as it handles that rename's move. An entry is not "udev is
// done": libudev's answer is taken only without the flag. Here the worker lingers 3 s
// between entry and rename (18 ms was seen in the VM under load, where vfready renamed
// first and udevd renamed the VF away after it): vfready's names must be the last.
TEST(VfreadydUdev, WaitsOutAUdevRenameThatLibudevAlreadyLists) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1).udev_silent().udev_renaming_ms(3000));
  auto config = nlohmann::json::parse(read_file(repo_config()));
  config["pfs"][0]["select"]["pci"] = {"0000:18:00.0"};
  config["pfs"][0]["vfs"] = 2;
  // Unheard, udev is asked after a second and at this bound: the second answer is "done".
  config["timeouts"]["udev_ms"] = 6000;
  auto r = sh(vfreadyd_command(host, write_config(host, config.dump())), 60s);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // udevd's queue empty: every rename of its is done.
  ASSERT_TRUE(wait_until([&] { return !exists(host.root() + "/run/udev/queue"); }, 30s));
  EXPECT_EQ(host.netdev_of("0000:18:00.1"), "ibs0v0") << testing::PrintToString(host.renames());
  EXPECT_EQ(host.netdev_of("0000:18:00.2"), "ibs0v1") << testing::PrintToString(host.renames());
  EXPECT_TRUE(host.renamed(" ibp24s0v0 ibs0v0")) << testing::PrintToString(host.renames());
}

// udevd starts after vfreadyd: libudev gives a monitor made while udevd is not running no
// events, for the monitor's life. vfready says so; the first pass has no udevd to wait
// for, and a pass after udevd started asks libudev for each netdev instead.
TEST(VfreadydUdev, AUdevdThatStartsAfterVfreadydIsAskedThroughLibudev) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1).udev_starts_on_signal());
  auto config = nlohmann::json::parse(read_file(repo_config()));
  config["pfs"][0]["select"]["pci"] = {"0000:18:00.0"};
  config["pfs"][0]["vfs"] = 2;
  ServiceDaemon daemon(host, write_config(host, config.dump()), "--no-bus");
  ASSERT_TRUE(daemon.notify().wait_for("READY=1", 60s)) << daemon.log();
  EXPECT_THAT(daemon.log(), HasSubstr("udevd was not running when vfreadyd started"));
  ASSERT_EQ(::kill(host.pid(), SIGUSR1), 0);  // udevd starts
  // VF 1 comes back with a zero GUID (as after a driver reload): the repair pass probes
  // it again, and libudev says when udev is done with its new netdev.
  const auto port = host.pci("0000:18:00.0", "sriov/1/port");
  const auto guid = trimmed(read_file(port));
  const auto before = daemon.notify().count();
  const auto sys = host.root() + "/sys/bus/pci/drivers/mlx5_core/";
  ASSERT_EQ(sh("echo 00:00:00:00:00:00:00:00 > " + port + " && echo 0000:18:00.2 > " + sys +
               "unbind && echo 0000:18:00.2 > " + sys + "bind")
                .exit_code,
            0);
  // A pass that looks mid-rebind (the netdev gone, the driver still bound) takes the VF
  // for a pod's and leaves it; the new netdev's link event (udev's is not heard) then
  // starts the pass that repairs it. Each pass ends with a STATUS: pass by pass, until
  // the VF is repaired.
  const auto until = std::chrono::steady_clock::now() + 30s;
  std::size_t from = before;
  bool repaired = false;
  while (!repaired && std::chrono::steady_clock::now() < until) {
    ASSERT_TRUE(daemon.notify().wait_for("STATUS=ready: 1/1 PFs ready", 30s, from)) << daemon.log();
    from = daemon.notify().count();  // before looking: a pass ending meanwhile is seen
    const auto links = host.links();
    repaired = trimmed(read_file(port)) == guid &&
               std::find(links.begin(), links.end(), "ibs0v1") != links.end();
  }
  EXPECT_TRUE(repaired) << daemon.log();
  const auto pass = logged_kernel_calls(daemon.log(), "since the pass began");
  EXPECT_GE(pass.at("udev lookups"), 1U) << daemon.log();
  EXPECT_EQ(daemon.stop(), 0);
}

TEST(VfreadydUdev, NamesEachNetdevOnceUdevHasAnnouncedIt) {
  VFREADY_REQUIRE_ROOT();
  // udev takes 400 ms per netdev. A wait that missed udev's event would last its whole
  // bound (30 s) and end in a udev-timeout problem; the other test shows the wait is real.
  FakeHost host(TopologyBuilder::reference().probe_ms(1).udev_latency_ms(400));
  auto config = nlohmann::json::parse(read_file(repo_config()));
  config["pfs"][0]["select"]["pci"] = {"0000:18:00.0"};
  config["pfs"][0]["vfs"] = 2;
  auto r = sh(vfreadyd_command(host, write_config(host, config.dump())), 60s);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(host.renamed(" ibp24s0v0 ibs0v0")) << testing::PrintToString(host.renames());
  EXPECT_TRUE(host.renamed(" ibp24s0v1 ibs0v1")) << testing::PrintToString(host.renames());
}

TEST(VfreadydFault, UdevEventsLostToAnOverrunBringALookAtEveryPf) {
  VFREADY_REQUIRE_ROOT();
  // udev's messages pile up while vfreadyd is stopped, past what its monitor's buffer
  // holds: the kernel drops the rest and the next read says so (ENOBUFS). A netdev
  // re-created meanwhile could be among them, so every PF is looked at.
  FakeHost host(TopologyBuilder::reference().probe_ms(5));
  ServiceDaemon daemon(host, repo_config(), "--no-bus");
  ASSERT_TRUE(daemon.notify().wait_for("READY=1", 60s)) << daemon.log();
  const auto before = daemon.notify().count();
  daemon.process().signal(SIGSTOP);
  // Some 1 KiB of buffer each against vfreadyd's 32 MiB (16 MiB asked, doubled).
  const auto flood = sh(on_host(host) + VFREADY_UDEV_EVENTS_PATH " flood 80000", 60s);
  daemon.process().signal(SIGCONT);
  ASSERT_EQ(flood.exit_code, 0) << flood.err;
  ASSERT_TRUE(wait_until(
      [&] {
        return daemon.log().find(
                   "udev events were lost (monitor buffer overrun): looking at "
                   "every PF") != std::string::npos;
      },
      20s))
      << daemon.log();
  ASSERT_TRUE(daemon.notify().wait_for("STATUS=ready: 8/8 PFs ready", 20s, before)) << daemon.log();
  EXPECT_THAT(daemon.log(), HasSubstr("reconciling 8 PF(s) after drift"));
  EXPECT_EQ(daemon.stop(), 0);
}

namespace {

// The spawner of vfreadyd `daemon` (vfready-spawn, double-forked: nobody's child), found
// as the process of that name in the daemon's network namespace (each fake host has its
// own): 0 when there is none.
pid_t spawner_of(pid_t daemon) {
  std::error_code ec;
  const auto netns =
      std::filesystem::read_symlink("/proc/" + std::to_string(daemon) + "/ns/net", ec);
  if (ec) {
    return 0;
  }
  std::filesystem::directory_iterator it("/proc", ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    std::error_code ignored;
    if (read_file(it->path().string() + "/comm") == "vfready-spawn\n" &&
        std::filesystem::read_symlink(it->path() / "ns/net", ignored) == netns) {
      return std::stoi(name);
    }
  }
  return 0;
}

}  // namespace

// Its spawner killed, vfreadyd forks its helpers itself: a pass after that (a reload; the
// idle helpers end with each pass, so every call of it needs a new one) brings every PF
// up as before.
TEST(VfreadydFault, ForksItsHelpersItselfOnceItsSpawnerIsGone) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  ServiceDaemon daemon(host, repo_config(), "--no-bus");
  ASSERT_TRUE(daemon.notify().wait_for("READY=1", 60s)) << daemon.log();
  const pid_t spawner = spawner_of(daemon.process().pid());
  ASSERT_GT(spawner, 0) << "no vfready-spawn beside vfreadyd";
  ASSERT_EQ(::kill(spawner, SIGKILL), 0);
  // Gone (or a zombie, its socket closed) before the reload: the reload's first spawn
  // finds it gone rather than racing its exit.
  ASSERT_TRUE(wait_until(
      [&] {
        const auto stat = read_file("/proc/" + std::to_string(spawner) + "/stat");
        return stat.empty() || stat.find(") Z ") != std::string::npos;
      },
      10s));
  const auto before = daemon.notify().count();
  daemon.process().signal(SIGHUP);
  ASSERT_TRUE(daemon.notify().wait_for("STATUS=ready: 8/8 PFs ready", 60s, before)) << daemon.log();
  EXPECT_THAT(daemon.log(), Not(HasSubstr("stuck")));
  EXPECT_EQ(daemon.stop(), 0);
}

// Its spawner stopped (SIGSTOP), the calls handed to it are never taken up by a helper:
// past their bound their PFs are stuck, the problem saying that no helper took the call
// (not that the driver holds it), and vfreadyd forks its helpers itself from then on.
// Once the spawner goes on (SIGCONT) it forks the helpers it was asked for, the calls are
// made and return, and every PF is brought up again.
TEST(VfreadydFault, SaysNoHelperTookACallWhenItsSpawnerIsStoppedAndGoesOnAfter) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  const auto config = write_config(host, read_file(repo_config()));
  write_config(host, R"({"timeouts": {"device_call_ms": 500}})", "vfready.d/50-calls.json");
  ServiceDaemon daemon(host, config, "--no-bus");
  ASSERT_TRUE(daemon.notify().wait_for("READY=1", 60s)) << daemon.log();
  const pid_t spawner = spawner_of(daemon.process().pid());
  ASSERT_GT(spawner, 0) << "no vfready-spawn beside vfreadyd";
  ASSERT_EQ(::kill(spawner, SIGSTOP), 0);
  const auto before = daemon.notify().count();
  daemon.process().signal(SIGHUP);  // a pass: its calls need new helpers
  const bool said = wait_until(
      [&] {
        return daemon.log().find("was not taken up by a helper process within 500 ms") !=
               std::string::npos;
      },
      30s);
  ASSERT_EQ(::kill(spawner, SIGCONT), 0);
  ASSERT_TRUE(said) << daemon.log();
  EXPECT_THAT(daemon.log(), HasSubstr("vfready-spawn, which forks them, made none"));
  ASSERT_TRUE(daemon.notify().wait_for("STATUS=ready: 8/8 PFs ready", 60s, before)) << daemon.log();
  EXPECT_EQ(daemon.stop(), 0);
}

// Helpers that cannot start (a descriptor limit of 40): no PF may be called ready with
// what it has not been given. Each PF's planned name, altnames and MTU are read back as
// its VFs' are, and a netlink request that cannot be made is its PF's problem.
TEST(VfreadydLimits, CallsNoPfReadyThatItCouldNotName) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  const auto r = sh("prlimit --nofile=40 " + vfreadyd_command(host, repo_config()), 120s);
  // The table's rows: "0000:40:00.0 ibs1  ready ...".
  const std::regex row(R"(^(0000:[0-9a-f:.]+) +(\S+) +(ready|failed|degraded|stuck) )");
  std::size_t rows = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) {
      continue;
    }
    ++rows;
    if (m[3] == "ready") {
      EXPECT_THAT(m[2].str(), testing::MatchesRegex("ibs[0-7]")) << "ready, named " << line;
    }
  }
  EXPECT_EQ(rows, 8U) << r.out << r.err;
}
