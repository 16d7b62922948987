// SPDX-License-Identifier: Apache-2.0
// vfreadyd as a service: its D-Bus API on a private bus, vfreadyctl, access control,
// the watchdog and reload, on the simulated DGX H200.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <csignal>

#include <fstream>
#include <functional>

#include "bus_commands.hpp"
#include "daemon_run.hpp"
#include "private_bus.hpp"
#include "root_only.hpp"
#include "service_daemon.hpp"

using namespace vfready::testing;
using testing::HasSubstr;
using testing::Not;

TEST(VfreadydBus, ShowsTheApiAndDescribeMatchesTheHost) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(20));
  PrivateBus bus(PrivateBus::Policy::kShipped);
  ServiceDaemon daemon(host, repo_config(), "--bus-address " + bus.address());
  ASSERT_TRUE(serving(daemon, bus));

  const auto introspect = sh(busctl(bus, "introspect org.vfready.vfready1 /org/vfready/vfready1"));
  ASSERT_EQ(introspect.exit_code, 0) << introspect.err;
  for (const char* member : {".Describe", ".DescribePF", ".GetPF", ".Reconcile", ".Reload",
                             ".State", ".Steps", ".PFs", ".VFCount"}) {
    EXPECT_THAT(introspect.out, HasSubstr(member));
  }
  EXPECT_EQ(state(bus), "s \"ready\"");
  EXPECT_EQ(trimmed(sh(busctl(bus, manager("get-property", "VFCount"))).out), "u 64");

  const auto call = sh(busctl(bus, "--json=short " + manager("call", "Describe")));
  ASSERT_EQ(call.exit_code, 0) << call.err;
  const auto status =
      nlohmann::json::parse(nlohmann::json::parse(call.out)["data"][0].get<std::string>());
  EXPECT_EQ(status["state"], "ready");
  EXPECT_EQ(status["vf_count"], 64);
  ASSERT_EQ(status["pfs"].size(), kReferenceIbPfs.size());
  for (std::size_t p = 0; p < kReferenceIbPfs.size(); ++p) {
    const auto& pf = status["pfs"][p];
    EXPECT_EQ(pf["pci"], kReferenceIbPfs[p]);
    EXPECT_EQ(pf["name"], "ibs" + std::to_string(p));
    ASSERT_EQ(pf["vfs"].size(), 8U);
    for (int v = 0; v < 8; ++v) {
      const auto& vf = pf["vfs"][static_cast<std::size_t>(v)];
      EXPECT_EQ(vf["name"], "ibs" + std::to_string(p) + "v" + std::to_string(v));
      // The GUID reported is the one the (fake) hardware uses.
      EXPECT_EQ(
          vf["guid"].get<std::string>(),
          trimmed(read_file(host.pci(kReferenceIbPfs[p], "sriov/" + std::to_string(v) + "/port"))));
    }
  }

  // Each PF is an object of its own, found by name.
  const auto path = sh(busctl(bus, manager("call", "GetPF s ibs2v5")));
  EXPECT_EQ(trimmed(path.out), "o \"/org/vfready/vfready1/pf/_30000_3a4f_3a00_2e0\"");
  EXPECT_EQ(trimmed(sh(busctl(bus,
                              "get-property org.vfready.vfready1 "
                              "/org/vfready/vfready1/pf/_30000_3a4f_3a00_2e0 "
                              "org.vfready.vfready1.PF Name"))
                        .out),
            "s \"ibs2\"");

  // vfreadyctl reads the same, as JSON and as a table.
  const auto json = sh(vfreadyctl(bus, "status --json"));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto ctl = nlohmann::json::parse(json.out);
  std::size_t named = 0;
  for (const auto& pf : ctl["pfs"]) {
    for (const auto& vf : pf["vfs"]) {
      named += !vf["name"].get<std::string>().empty() && vf["guid"] != "00:00:00:00:00:00:00:00";
    }
  }
  EXPECT_EQ(named, 64U);
  const auto table = sh(vfreadyctl(bus, "status"));
  EXPECT_THAT(table.out, HasSubstr("State: ready"));
  EXPECT_THAT(table.out, HasSubstr("ibs7v7"));
  const auto one = sh(vfreadyctl(bus, "describe ibs3"));
  EXPECT_THAT(one.out, HasSubstr("PF 0000:5e:00.0 (ibs3): ready"));
  EXPECT_THAT(one.out, HasSubstr("validate done"));
  EXPECT_EQ(sh(vfreadyctl(bus, "describe ibs99")).exit_code, 1);
  // What a caller sent comes back escaped in the error, never as control bytes.
  const auto odd = sh(busctl(bus, manager("call", "DescribePF s $'x\\x1by'")));
  EXPECT_NE(odd.exit_code, 0);
  EXPECT_THAT(odd.err, HasSubstr("x\\x1by")) << odd.err;
  EXPECT_EQ(odd.err.find('\x1b'), std::string::npos);

  EXPECT_EQ(daemon.stop(), 0);
}

// DescribePF is everyone's: a key of 8 MiB of control bytes (escaped, 32 MiB: more than
// the bus passes in one message) comes back as its first 64 bytes and its length, and
// vfreadyd stays on the bus, publishing and answering.
TEST(VfreadydBus, AnswersAHugeKeyInBriefAndStaysOnTheBus) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(5));
  PrivateBus bus(PrivateBus::Policy::kShipped);
  ServiceDaemon daemon(host, repo_config(), "--bus-address " + bus.address());
  ASSERT_TRUE(serving(daemon, bus));
  const auto huge =
      sh(as_nobody(std::string(VFREADY_BUS_DESCRIBE_PF_PATH) + " " + bus.address() + " 8388608"),
         120s);
  EXPECT_EQ(huge.exit_code, 1) << huge.out << huge.err;
  EXPECT_THAT(huge.out, testing::StartsWith("error "));
  EXPECT_THAT(huge.out, HasSubstr("\\x01\\x01")) << "escaped";
  EXPECT_THAT(huge.out, HasSubstr("(8388608 bytes)")) << huge.out.substr(0, 300);
  EXPECT_LT(huge.out.size(), 500U);
  // Still on the bus: a pass that publishes, then what it published, read back.
  EXPECT_EQ(sh(vfreadyctl(bus, "reconcile")).exit_code, 0);
  EXPECT_TRUE(wait_until([&] { return state(bus) == "s \"ready\""; }, 30s));
  EXPECT_THAT(daemon.log(), Not(HasSubstr("connection lost")));
  EXPECT_EQ(daemon.stop(), 0);
}

// The bus goes away under vfreadyd, a pass repairs drift meanwhile (a PF after the first
// one changes), and the bus comes back: vfreadyd reconnects and shows the repair. (A
// publish on the dead connection before the loop hears of it, which once left null
// objects behind, is not made to happen here: the loop hears of it first.)
TEST(VfreadydBus, OutlivesItsBusAndPublishesOnTheNextOne) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(5));
  PrivateBus bus(PrivateBus::Policy::kShipped);
  ServiceDaemon daemon(host, repo_config(), "--bus-address " + bus.socket_address());
  ASSERT_TRUE(serving(daemon, bus));
  bus.stop();
  const auto passes = [&] {
    const auto log = daemon.log();
    std::size_t n = 0;
    for (auto at = log.find("ready: "); at != std::string::npos; at = log.find("ready: ", at + 1)) {
      ++n;
    }
    return n;
  };
  const auto before = passes();
  ASSERT_EQ(sh("ip -n " + host.netns() + " link set ibs1v0 name other0").exit_code, 0);
  ASSERT_TRUE(wait_until([&] { return passes() > before && host.has_link("ibs1v0"); }, 60s))
      << daemon.log();
  bus.start();
  ASSERT_TRUE(bus.wait_for_owner("org.vfready.vfready1")) << daemon.log();
  EXPECT_TRUE(wait_until([&] { return state(bus) == "s \"ready\""; }, 30s));
  EXPECT_THAT(daemon.log(), HasSubstr("reconnecting"));
  EXPECT_EQ(daemon.stop(), 0) << daemon.log();
}

TEST(VfreadydBus, ReadsAreForEveryoneChangesForRoot) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(5));
  PrivateBus bus(PrivateBus::Policy::kShipped);
  ServiceDaemon daemon(host, repo_config(), "--bus-address " + bus.address());
  ASSERT_TRUE(serving(daemon, bus));

  const auto state = sh(as_nobody(busctl(bus, manager("get-property", "State"))));
  EXPECT_EQ(state.exit_code, 0) << state.err;
  EXPECT_EQ(trimmed(state.out), "s \"ready\"");
  EXPECT_EQ(sh(as_nobody(vfreadyctl(bus, "status --json"))).exit_code, 0);

  // The bus policy stops an unprivileged caller: AccessDenied (exit code 4).
  const auto denied = sh(as_nobody(vfreadyctl(bus, "reconcile")));
  EXPECT_EQ(denied.exit_code, 4) << denied.out << denied.err;
  EXPECT_EQ(denied.err, "vfreadyctl: reconcile needs root\n");
  EXPECT_EQ(sh(as_nobody(vfreadyctl(bus, "reload"))).exit_code, 4);
  EXPECT_NE(sh(as_nobody(busctl(bus, manager("call", "Reconcile")))).exit_code, 0);

  // Root may: a reconcile runs the bring-up again and reaches ready again.
  const auto before = daemon.notify().count();
  const auto reconcile = sh(vfreadyctl(bus, "reconcile"));
  EXPECT_EQ(reconcile.exit_code, 0) << reconcile.err << daemon.log();
  EXPECT_TRUE(daemon.notify().wait_for("STATUS=ready: 8/8 PFs ready", 60s, before));
  EXPECT_EQ(daemon.stop(), 0);
}

TEST(VfreadydBus, ItsOwnUidCheckDeniesWhereThePolicyWouldAllow) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(5));
  PrivateBus bus(PrivateBus::Policy::kOpen);
  ServiceDaemon daemon(host, repo_config(), "--bus-address " + bus.address());
  ASSERT_TRUE(serving(daemon, bus));
  for (const char* method : {"reconcile", "reload"}) {
    const auto r = sh(as_nobody(vfreadyctl(bus, method)));
    EXPECT_EQ(r.exit_code, 4) << method;
    // What needs root, not the words of whoever refused.
    EXPECT_EQ(r.err, "vfreadyctl: " + std::string(method) + " needs root\n");
  }
  // Here vfreadyd's own check refused it: the policy lets anyone through.
  const auto raw = sh(as_nobody(busctl(bus, manager("call", "Reconcile"))));
  EXPECT_NE(raw.exit_code, 0);
  EXPECT_THAT(raw.err, HasSubstr("Access denied"));
  const auto reload = sh(vfreadyctl(bus, "reload"));
  EXPECT_EQ(reload.exit_code, 0) << reload.err << daemon.log();
}

TEST(Vfreadyctl, SaysInOneLineThatTheDaemonIsNotRunning) {
  VFREADY_REQUIRE_ROOT();
  PrivateBus bus(PrivateBus::Policy::kShipped);
  const auto r = sh(vfreadyctl(bus, "--status-file /nonexistent/status.json status"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "vfreadyctl: vfreadyd is not running (nothing owns org.vfready.vfready1 on "
            "the bus); and no status file: /nonexistent/status.json: No such file or "
            "directory\n");
  // No bus at all: the same code.
  const auto none = sh(VFREADYCTL_PATH " --bus-address unix:path=/nonexistent/socket status");
  EXPECT_EQ(none.exit_code, 3);
  EXPECT_EQ(std::count(none.err.begin(), none.err.end(), '\n'), 1) << none.err;
  EXPECT_THAT(sh(VFREADYCTL_PATH " --help").out, HasSubstr("3 vfreadyd is not running"));
}

TEST(VfreadydWatchdog, PingsWhileTheLoopRunsAndStopsWhenItIsWedged) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(5));
  // systemd's WatchdogSec=200ms: a ping every 100 ms.
  ServiceDaemon daemon(host, repo_config(), "--no-bus --debug-stall-on-sigusr2",
                       "WATCHDOG_USEC=200000 ");
  ASSERT_TRUE(daemon.notify().wait_for("READY=1", 60s)) << daemon.log();
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(daemon.notify().wait_for("WATCHDOG=1", 2s, daemon.notify().count()));
  }
  daemon.process().signal(SIGUSR2);
  ASSERT_TRUE(daemon.notify().wait_for("STATUS=Event loop stalled", 5s));
  const auto stalled = daemon.notify().count();
  // Ten intervals pass without a ping: the wedged loop no longer feeds the watchdog.
  EXPECT_FALSE(daemon.notify().wait_for("WATCHDOG=1", 1s, stalled));
  daemon.process().signal(SIGKILL);
}

TEST(VfreadydReload, KeepsTheRunningConfigOnABadOneAndAppliesAGoodOne) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(5));
  PrivateBus bus(PrivateBus::Policy::kShipped);
  std::string config = read_file(repo_config());
  const auto path = write_config(host, config);
  ServiceDaemon daemon(host, path, "--bus-address " + bus.address());
  ASSERT_TRUE(serving(daemon, bus));

  write_config(host, "{\"pfs\": [ {\"vfs\": \"eight\"} ]}");
  const auto bad = sh(vfreadyctl(bus, "reload"));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr(path));
  EXPECT_THAT(bad.err, HasSubstr("the running configuration stays"));
  EXPECT_EQ(state(bus), "s \"ready\"");
  EXPECT_THAT(sh(busctl(bus, manager("get-property", "Problems"))).out, HasSubstr(path));

  // A good one with another VF MTU: links change MTU; nothing is written or renamed.
  const auto pos = config.find("\"mtu\": 4092");
  ASSERT_NE(pos, std::string::npos) << "the reference config sets the VF MTU";
  config.replace(pos, std::string("\"mtu\": 4092").size(), "\"mtu\": 2044");
  write_config(host, config);
  const auto writes = host.writes().size();
  const auto renames = host.renames().size();
  const auto before = daemon.notify().count();
  const auto good = sh(vfreadyctl(bus, "reload"));
  EXPECT_EQ(good.exit_code, 0) << good.err;
  ASSERT_TRUE(daemon.notify().wait_for("STATUS=ready: 8/8 PFs ready", 60s, before));
  const auto link = nlohmann::json::parse(sh("ip -n " + host.netns() + " -j link show ibs5v6").out);
  EXPECT_EQ(link[0]["mtu"], 2044);
  EXPECT_EQ(host.writes().size(), writes);
  EXPECT_EQ(host.renames().size(), renames);
  EXPECT_EQ(trimmed(sh(busctl(bus, manager("get-property", "Problems"))).out), "as 0");
}

TEST(VfreadydBus, GivesEachProblemItsStableCode) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.function("0000:40:00.0")["faults"] = {{"numvfs_errno", "EIO"}};
  FakeHost host(t);
  const auto config = write_degraded_ready_config(host);
  PrivateBus bus(PrivateBus::Policy::kShipped);
  ServiceDaemon daemon(host, config, "--bus-address " + bus.address());
  ASSERT_TRUE(serving(daemon, bus));

  const auto codes = sh(busctl(bus,
                               "get-property org.vfready.vfready1 "
                               "/org/vfready/vfready1/pf/_30000_3a40_3a00_2e0 "
                               "org.vfready.vfready1.PF ProblemCodes"));
  EXPECT_EQ(trimmed(codes.out), "as 1 \"numvfs-failed\"") << codes.err;
  const auto json = sh(vfreadyctl(bus, "status --json"));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto status = nlohmann::json::parse(json.out);
  for (const auto& pf : status["pfs"]) {
    if (pf["pci"] != "0000:40:00.0") {
      EXPECT_TRUE(pf["problem_details"].empty()) << pf["pci"];
      continue;
    }
    ASSERT_EQ(pf["problem_details"].size(), 1U);
    const auto& p = pf["problem_details"][0];
    EXPECT_EQ(p["code"], "numvfs-failed");
    EXPECT_EQ(p["pf"], "0000:40:00.0");
    EXPECT_EQ(p["message_id"].get<std::string>().size(), 32U);
    EXPECT_THAT(p["text"].get<std::string>(), HasSubstr("failed with EIO"));
    EXPECT_FALSE(p["remedy"].get<std::string>().empty());
    EXPECT_EQ(pf["problems"][0], p["text"]);  // the plain list stays as it was
  }
  EXPECT_EQ(daemon.stop(), 0);
}

TEST(VfreadydReload, SurvivesHostileConfigsKeepingTheRunningOne) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(5));
  PrivateBus bus(PrivateBus::Policy::kShipped);
  const auto path = write_config(host, read_file(repo_config()));
  ServiceDaemon daemon(host, path, "--bus-address " + bus.address());
  ASSERT_TRUE(serving(daemon, bus));
  // Each puts something hostile where the configuration is: bad JSON, then what is not
  // a regular file of JSON at all.
  const auto put = [&](const std::string& text) { write_config(host, text); };
  const auto make = [&](const std::string& how) {
    ASSERT_EQ(sh("rm -rf " + path + " && " + how).exit_code, 0) << how;
  };
  const std::vector<std::pair<const char*, std::function<void()>>> hostile = {
      {"1e400", [&] { put(R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 1e400}]})"); }},
      {"nested", [&] { put(std::string(100000, '[') + std::string(100000, ']')); }},
      {"twice", [&] { put(R"({"pfs": [], "pfs": []})"); }},
      {"fifo", [&] { make("mkfifo " + path); }},
      {"dev-zero", [&] { make("ln -s /dev/zero " + path); }},
      {"directory", [&] { make("mkdir " + path); }}};
  for (const auto& [name, hostile_config] : hostile) {
    hostile_config();
    const auto by_bus = sh(vfreadyctl(bus, "reload"));
    EXPECT_EQ(by_bus.exit_code, 1) << name << ": " << by_bus.err;
    EXPECT_THAT(by_bus.err, HasSubstr(path)) << name;
    // And by SIGHUP, as systemctl reload sends it.
    const auto before = daemon.notify().count();
    daemon.process().signal(SIGHUP);
    EXPECT_TRUE(daemon.notify().wait_for_text("the running configuration stays", 10s, before))
        << name;
    EXPECT_FALSE(daemon.process().exited()) << name << ": " << daemon.log();
    EXPECT_EQ(state(bus), "s \"ready\"");
    EXPECT_EQ(trimmed(sh(busctl(bus, manager("get-property", "ProblemCodes"))).out),
              "as 1 \"reload-refused\"")
        << name;
  }
  EXPECT_EQ(daemon.stop(), 0);
}

TEST(VfreadydBus, AnswersEveryoneAfterANetdevWasNamedWithBytesThatAreNotUtf8) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(5));
  PrivateBus bus(PrivateBus::Policy::kShipped);
  ServiceDaemon daemon(host, repo_config(), "--bus-address " + bus.address());
  ASSERT_TRUE(serving(daemon, bus));
  ASSERT_EQ(sh("ip -n " + host.netns() + " link set ibs0v0 name $'ib\\xff\\xfe'").exit_code, 0);
  // vfready names it back; the event it logs names the bytes it saw.
  ASSERT_TRUE(wait_until([&] { return exists(host.pci("0000:18:00.1", "net/ibs0v0")); }, 10s));
  const auto json = sh(as_nobody(vfreadyctl(bus, "status --json")));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_THAT(json.out, HasSubstr("ib\\\\xff\\\\xfe"));  // escaped, in a JSON string
  EXPECT_EQ(sh(as_nobody(vfreadyctl(bus, "status"))).exit_code, 0);
  EXPECT_FALSE(daemon.process().exited()) << daemon.log();
  EXPECT_EQ(daemon.stop(), 0);
}

TEST(VfreadydReload, VfreadyctlReloadReturnsOnlyOnceTheNewConfigIsInForce) {
  VFREADY_REQUIRE_ROOT();
  // 8 VFs x 200 ms per PF: the first pass runs long enough to reload during it.
  FakeHost host(TopologyBuilder::reference().probe_ms(200));
  std::string config = read_file(repo_config());
  const auto path = write_config(host, config);
  PrivateBus bus(PrivateBus::Policy::kShipped);
  ServiceDaemon daemon(host, path, "--bus-address " + bus.address());
  ASSERT_TRUE(daemon.notify().wait_for_text("guids", 30s)) << daemon.log();
  ASSERT_TRUE(bus.wait_for_owner("org.vfready.vfready1"));
  EXPECT_EQ(trimmed(sh(busctl(bus, manager("get-property", "ConfigGeneration"))).out), "u 1");
  config.replace(config.find("\"mtu\": 4092"), std::string("\"mtu\": 4092").size(),
                 "\"mtu\": 2044");
  write_config(host, config);
  const auto r = sh(vfreadyctl(bus, "reload --timeout 60"), 90s);
  ASSERT_EQ(r.exit_code, 0) << r.err << daemon.log();
  EXPECT_THAT(r.out, HasSubstr("in force"));
  // It came back after the pass it waited for had ended (READY=1 is sent at its end,
  // before the waiting configuration is put in force) ...
  EXPECT_TRUE(daemon.notify().wait_for("READY=1", 1s));
  // ... and with the new configuration in force.
  EXPECT_EQ(trimmed(sh(busctl(bus, manager("get-property", "ConfigGeneration"))).out), "u 2");
  // A refused one fails at once, naming the file.
  write_config(host, "{");
  const auto refused = sh(vfreadyctl(bus, "reload"));
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr(path));
  EXPECT_EQ(daemon.stop(), 0);
}

TEST(VfreadydReload, ReadDuringAPassIsAppliedWhenItEnds) {
  VFREADY_REQUIRE_ROOT();
  // 8 VFs x 200 ms per PF: the first pass runs long enough to be interrupted.
  FakeHost host(TopologyBuilder::reference().probe_ms(200));
  std::string config = read_file(repo_config());
  const auto path = write_config(host, config);
  ServiceDaemon daemon(host, path, "--no-bus");
  ASSERT_TRUE(daemon.notify().wait_for_text("guids", 30s)) << daemon.log();
  const auto pos = config.find("\"mtu\": 4092");
  ASSERT_NE(pos, std::string::npos);
  config.replace(pos, std::string("\"mtu\": 4092").size(), "\"mtu\": 2044");
  write_config(host, config);
  daemon.process().signal(SIGHUP);
  ASSERT_TRUE(daemon.notify().wait_for_text("it applies when the running pass ends", 10s))
      << daemon.log();
  ASSERT_TRUE(daemon.notify().wait_for("READY=1", 60s)) << daemon.log();
  // The pass that READY=1 ended set 4092; the queued reload's pass sets 2044.
  EXPECT_TRUE(wait_until(
      [&] {
        const auto r = sh("ip -n " + host.netns() + " -j link show ibs7v7");
        return r.exit_code == 0 && nlohmann::json::parse(r.out)[0]["mtu"] == 2044;
      },
      60s))
      << daemon.log();
  EXPECT_EQ(daemon.stop(), 0);
}

// Signals a production daemon meets by accident: its console log's reader leaves (SIGPIPE
// on the next line), a stray SIGUSR1 or SIGALRM. Each ended vfreadyd; now the log's
// writes fail (EPIPE), the two signals are logged and ignored, and only SIGTERM stops it.
TEST(VfreadydSignals, GoesOnWithoutItsLogsReaderAndIgnoresUsr1AndAlrm) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  NotifySocket notify;
  const auto fifo = host.root() + "/log.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Background daemon("NOTIFY_SOCKET=" + notify.path() + " exec " +
                    vfreadyd_command(host, repo_config(), "--no-bus") + " 2>" + fifo);
  {
    // The reader: one byte of the first line, then gone (the shell's open waits for it).
    std::ifstream log(fifo);
    ASSERT_TRUE(log.good());
    char first = 0;
    log.get(first);
  }
  ASSERT_TRUE(notify.wait_for("READY=1", 60s)) << "vfreadyd went with its log's reader";
  for (int sig : {SIGUSR1, SIGALRM, SIGHUP}) {
    daemon.signal(sig);
  }
  // SIGHUP's reload notifies when done: every signal before it was taken by then.
  EXPECT_TRUE(notify.wait_for("RELOADING=1", 30s));
  EXPECT_FALSE(daemon.exited());
  daemon.signal(SIGTERM);
  EXPECT_EQ(daemon.wait(10s).exit_code, 0);
}
