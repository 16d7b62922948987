// SPDX-License-Identifier: Apache-2.0
// A driver that never returns from a sriov_numvfs write: its PF is stuck, and nothing
// else is. Passes end, drift is repaired, SIGTERM is quick, a restarted daemon meets the
// PF stuck in bounded time, and when the driver recovers the PF comes up.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bus_commands.hpp"
#include "daemon_run.hpp"
#include "root_only.hpp"

using namespace vfready::testing;
using testing::HasSubstr;
using testing::Not;

namespace {

constexpr const char* kHung = "0000:40:00.0";

nlohmann::json status_json(const PrivateBus& bus) {
  const auto r = sh(vfreadyctl(bus, "status --json"));
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

// The hung PF is stuck with one problem that names the call; the other seven are ready.
::testing::AssertionResult only_the_hung_pf_stuck(const PrivateBus& bus) {
  const auto status = status_json(bus);
  if (!status.contains("pfs") || status["pfs"].size() != 8) {
    return ::testing::AssertionFailure() << "no status: " << status.dump();
  }
  for (const auto& pf : status["pfs"]) {
    const bool hung = pf["pci"] == kHung;
    if (pf["state"] != (hung ? "stuck" : "ready")) {
      return ::testing::AssertionFailure() << pf.dump();
    }
    if (hung &&
        (pf["problem_details"].size() != 1 || pf["problem_details"][0]["code"] != "pf-stuck" ||
         pf["problem_details"][0]["text"].get<std::string>().find("sriov_numvfs") ==
             std::string::npos)) {
      return ::testing::AssertionFailure() << pf.dump();
    }
  }
  return ::testing::AssertionSuccess();
}

// The helpers (vfready-call) of vfreadyd `daemon`, those in its network namespace, that
// are in write(2) (system call 1) now.
std::vector<pid_t> helpers_writing(pid_t daemon) {
  std::vector<pid_t> out;
  std::error_code ec;
  const auto netns =
      std::filesystem::read_symlink("/proc/" + std::to_string(daemon) + "/ns/net", ec);
  std::filesystem::directory_iterator it("/proc", ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const auto name = it->path().filename().string();
    std::error_code ignored;
    if (name.find_first_not_of("0123456789") == std::string::npos &&
        read_file(it->path().string() + "/comm") == "vfready-call\n" &&
        std::filesystem::read_symlink(it->path() / "ns/net", ignored) == netns &&
        read_file(it->path().string() + "/syscall").starts_with("1 ")) {
      out.push_back(std::stoi(name));
    }
  }
  return out;
}

// A process's state as /proc/<pid>/stat gives it ('T' stopped); 0 when it is gone.
char state_of(pid_t pid) {
  const auto stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() ? '\0' : stat[close + 2];
}

}  // namespace

// A helper someone stopped (SIGSTOP) in the middle of its call is told from a driver
// that holds the call: the PF is stuck, and its problem names the helper, says it is
// stopped and not held by the driver, and how to let it go on; once it goes on, its
// answer brings the PF up.
TEST(VfreadydStuck, TellsAStoppedHelperFromAHungDriverAndGoesOnOnceItIsContinued) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.function(kHung)["faults"] = {{"numvfs_write_hangs", true}};
  FakeHost host(t);
  auto config = nlohmann::json::parse(read_file(repo_config()));
  config["pfs"][0]["select"]["pci"] = {kHung};
  config["pfs"][0]["vfs"] = 2;
  config["timeouts"]["numvfs_ms"] = 1000;
  ServiceDaemon daemon(host, write_config(host, config.dump()), "--no-bus");
  std::vector<pid_t> writing;
  ASSERT_TRUE(wait_until(
      [&] {
        writing = helpers_writing(daemon.process().pid());
        return !writing.empty();
      },
      20s))
      << daemon.log();
  ASSERT_EQ(writing.size(), 1U);
  const pid_t helper = writing.front();
  ASSERT_EQ(::kill(helper, SIGSTOP), 0);
  // The driver returns from the write: the helper stops on its way out, before it answers.
  ASSERT_EQ(::kill(host.pid(), SIGUSR1), 0);
  ASSERT_TRUE(wait_until([&] { return state_of(helper) == 'T'; }, 10s)) << state_of(helper);
  ASSERT_TRUE(wait_until(
      [&] { return daemon.log().find("is stuck: write 2 to ") != std::string::npos; }, 30s))
      << daemon.log();
  // A pass now meets the PF stuck, and says what its helper's state is now.
  daemon.process().signal(SIGHUP);
  const auto pid = std::to_string(helper);
  const bool said = wait_until(
      [&] {
        return daemon.log().find("its helper process (vfready-call, pid " + pid +
                                 ") is stopped (state T") != std::string::npos;
      },
      30s);
  ASSERT_EQ(::kill(helper, SIGCONT), 0);
  ASSERT_TRUE(said) << daemon.log();
  EXPECT_THAT(daemon.log(), HasSubstr("not held by the driver; kill -CONT " + pid));
  ASSERT_TRUE(daemon.notify().wait_for("READY=1", 60s)) << daemon.log();
  EXPECT_EQ(daemon.stop(), 0);
}

TEST(VfreadydStuck, AHungPfIsStuckAloneAcrossPassesAndRestartsUntilItsDriverRecovers) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.function(kHung)["faults"] = {{"numvfs_write_hangs", true}};
  FakeHost host(t);
  const auto config = write_degraded_ready_config(host);
  write_config(host, R"({"timeouts": {"numvfs_ms": 1000, "device_call_ms": 1000}})",
               "vfready.d/60-timeouts.json");
  PrivateBus bus(PrivateBus::Policy::kShipped);
  {
    ServiceDaemon daemon(host, config, "--bus-address " + bus.address());
    ASSERT_TRUE(serving(daemon, bus));
    EXPECT_TRUE(only_the_hung_pf_stuck(bus));
    EXPECT_EQ(trimmed(sh(busctl(bus,
                                "get-property org.vfready.vfready1 "
                                "/org/vfready/vfready1/pf/_30000_3a40_3a00_2e0 "
                                "org.vfready.vfready1.PF State"))
                          .out),
              "s \"stuck\"");
    // Two more passes over every PF: each ends, the stuck PF answering at once.
    for (int i = 0; i < 2; ++i) {
      const auto before = daemon.notify().count();
      const auto r = sh(vfreadyctl(bus, "reconcile"));
      ASSERT_EQ(r.exit_code, 0) << r.err;
      ASSERT_TRUE(daemon.notify().wait_for_text("7/8 PFs ready", 10s, before)) << daemon.log();
      EXPECT_TRUE(only_the_hung_pf_stuck(bus));
    }
    // Drift on a healthy PF is still repaired.
    ASSERT_EQ(sh("ip -n " + host.netns() + " link set ibs0v3 name moved0").exit_code, 0);
    EXPECT_TRUE(wait_until([&] { return exists(host.pci("0000:18:00.4", "net/ibs0v3")); }, 10s))
        << daemon.log();
    // SIGTERM: out within 5 s, though a helper still waits in the driver.
    daemon.process().signal(SIGTERM);
    const auto end = daemon.process().wait(5s);
    EXPECT_FALSE(end.timed_out) << daemon.log();
    EXPECT_EQ(end.exit_code, 0);
  }
  {
    // The first daemon's write still holds the device lock: the restarted daemon's read
    // of sriov_numvfs outlives its bound, and its pass ends with the PF stuck.
    ServiceDaemon again(host, config, "--bus-address " + bus.address());
    ASSERT_TRUE(serving(again, bus));
    EXPECT_TRUE(only_the_hung_pf_stuck(bus));
    // The driver recovers: the calls return, and the PF is brought up.
    ASSERT_EQ(::kill(host.pid(), SIGUSR1), 0);
    EXPECT_TRUE(again.notify().wait_for_text("8/8 PFs ready", 30s)) << again.log();
    const auto status = status_json(bus);
    for (const auto& pf : status["pfs"]) {
      EXPECT_EQ(pf["state"], "ready") << pf.dump();
    }
    EXPECT_THAT(again.log(), HasSubstr("returned after"));
    EXPECT_EQ(again.stop(), 0);
  }
}

// A helper process SIGKILLed in the middle of its call (a probe that takes 300 ms): the
// PF's problem says it was vfready's helper, not the driver, and the PF is brought up
// again, its probe made on a new helper: READY=1 at boot, with nothing else asked.
TEST(VfreadydHelpers, AHelperKilledMidCallIsRetriedNotBlamedOnTheDriver) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(300));
  auto config = nlohmann::json::parse(read_file(repo_config()));
  config["pfs"][0]["select"]["pci"] = {"0000:18:00.0"};
  config["pfs"][0]["vfs"] = 2;
  ServiceDaemon daemon(host, write_config(host, config.dump()), "--no-bus");
  // Every helper killed, again and again, until vfready says one died mid-call (at the
  // end of the pass it failed).
  ASSERT_TRUE(wait_until(
      [&] {
        // This daemon's helpers only (those in its network namespace, the fake host's):
        // other tests' daemons run beside it.
        sh("pkill -KILL -x vfready-call --nslist net --ns " +
           std::to_string(daemon.process().pid()));
        return daemon.log().find("died before it answered") != std::string::npos;
      },
      60s))
      << daemon.log();
  ASSERT_TRUE(daemon.notify().wait_for("READY=1", 60s)) << daemon.log();
  EXPECT_THAT(daemon.log(), HasSubstr("died before it answered (vfready's, not the driver's)"));
  EXPECT_THAT(daemon.log(), Not(HasSubstr("Broken pipe")));
  EXPECT_EQ(daemon.stop(), 0);
}

// Every PF's sriov_numvfs write hung at boot (a driver that holds them all): a restart
// would meet the same driver, so vfreadyd stays, not ready, and says what it waits on.
// When the driver recovers, the calls return, each PF is brought up again and READY=1
// follows, with nothing else asked.
TEST(VfreadydStuck, WaitsAtBootForEveryPfStuckAndIsReadyWhenTheirCallsReturn) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  for (const char* pf : {"0000:18:00.0", "0000:40:00.0", "0000:4f:00.0", "0000:5e:00.0",
                         "0000:9a:00.0", "0000:c0:00.0", "0000:ce:00.0", "0000:dc:00.0"}) {
    t.function(pf)["faults"] = {{"numvfs_write_hangs", true}};
  }
  FakeHost host(t);
  const auto config = write_config(host, read_file(repo_config()));
  write_config(host, R"({"timeouts": {"numvfs_ms": 500, "device_call_ms": 500}})",
               "vfready.d/60-timeouts.json");
  ServiceDaemon daemon(host, config, "--no-bus");
  ASSERT_TRUE(daemon.notify().wait_for_text("0/8 PFs ready", 60s)) << daemon.log();
  ASSERT_TRUE(wait_until(
      [&] { return daemon.log().find("8 of 8 PFs wait on calls") != std::string::npos; }, 10s))
      << daemon.log();
  EXPECT_THAT(daemon.log(), Not(HasSubstr("exiting")));
  EXPECT_THAT(daemon.notify().received(), Not(testing::Contains(HasSubstr("READY=1"))));
  ASSERT_EQ(::kill(host.pid(), SIGUSR1), 0);  // the driver recovers: the writes return
  ASSERT_TRUE(daemon.notify().wait_for("READY=1", 60s)) << daemon.log();
  EXPECT_TRUE(daemon.notify().wait_for_text("8/8 PFs ready", 10s)) << daemon.log();
  EXPECT_EQ(daemon.stop(), 0);
}
