// SPDX-License-Identifier: Apache-2.0
// vfreadyctl as someone used to systemctl, networkctl and kubectl would use it: a
// reconcile queued behind a running pass and waited for, reload --wait.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "bus_commands.hpp"
#include "daemon_run.hpp"
#include "private_bus.hpp"
#include "root_only.hpp"
#include "service_daemon.hpp"

using namespace vfready::testing;
using testing::HasSubstr;

namespace {

// `command` (no single quotes in it) run on a pseudo-terminal (script(1)), as a person
// at a terminal runs it.
std::string on_a_terminal(const std::string& command) {
  return "script -qec '" + command + "' /dev/null";
}

}  // namespace

TEST(VfreadyctlReconcile, IsQueuedBehindARunningPassAndWaitedForWithWait) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.json()["modules"]["ib_ipoib"] = {{"loads_on_signal", true}};  // holds the first pass
  FakeHost host(t);
  PrivateBus bus(PrivateBus::Policy::kShipped);
  ServiceDaemon daemon(host, repo_config(), "--bus-address " + bus.address());
  ASSERT_TRUE(daemon.notify().wait_for("STATUS=Waiting up to 30000 ms for modules", 20s))
      << daemon.log();
  ASSERT_TRUE(bus.wait_for_owner("org.vfready.vfready1")) << daemon.log();
  // Asked while the first pass runs: not refused, but the next pass, waited for.
  Background reconcile(vfreadyctl(bus, "reconcile --wait --timeout 60"));
  ASSERT_TRUE(wait_until(
      [&] {
        return daemon.log().find("reconcile requested: it starts when the running pass ends") !=
               std::string::npos;
      },
      10s))
      << daemon.log();
  EXPECT_FALSE(reconcile.exited());
  // On a terminal, wait shows what the daemon is doing while it waits.
  const auto waiting = sh(on_a_terminal(vfreadyctl(bus, "wait --timeout 0.5")), 30s);
  EXPECT_EQ(waiting.exit_code, 5) << waiting.out;
  EXPECT_THAT(waiting.out, HasSubstr("\r\x1b[Kwaiting: configuring: Waiting up to 30000 ms"));
  ASSERT_EQ(::kill(host.pid(), SIGUSR1), 0);  // the module loads: the first pass goes on
  const auto r = reconcile.wait(60s);
  EXPECT_EQ(r.exit_code, 0) << r.err << daemon.log();
  EXPECT_EQ(r.out, "ready: 8/8 PFs ready\n") << daemon.log();
  // It returned on the second pass's outcome, not the first's.
  const auto status = nlohmann::json::parse(sh(vfreadyctl(bus, "status --json")).out);
  EXPECT_GE(status["passes_finished"].get<int>(), 2) << status.dump();
  EXPECT_THAT(daemon.log(), HasSubstr("starting the reconcile requested while the last pass ran"));

  // Without --wait: the pass's number; reload --wait: the outcome of the pass it starts.
  const auto queued = sh(vfreadyctl(bus, "reconcile"));
  EXPECT_EQ(queued.exit_code, 0) << queued.err;
  EXPECT_THAT(queued.out, testing::MatchesRegex("reconcile requested: pass [0-9]+\n"));
  const auto reload = sh(vfreadyctl(bus, "reload --wait --timeout 60"), 90s);
  EXPECT_EQ(reload.exit_code, 0) << reload.err;
  EXPECT_EQ(reload.out, "ready: 8/8 PFs ready\n");
  EXPECT_EQ(daemon.stop(), 0);
}

// Console log lines say when, how bad and which PF by address and name; asked for the
// journal where none listens (the fake host's /run has no journald), vfreadyd says so
// and logs to stderr.
TEST(VfreadydConsoleLog, CarriesTimeLevelAndThePfsNameAndFallsBackFromAMissingJournal) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  const auto r = sh(vfreadyd_command(host, repo_config(), "--once --log-target journal"), 60s);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, testing::ContainsRegex("(^|\n)[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:"
                                            "[0-9]{2}\\.[0-9]{3}Z warning the journal is not "
                                            "reachable \\(/run/systemd/journal/socket\\): "
                                            "logging to stderr instead\n"));
  EXPECT_THAT(r.err, testing::ContainsRegex("\n[0-9]{4}-[0-9-]{5}T[0-9:.]{12}Z info "
                                            "\\[0000:18:00.0 ibs0\\] ready in [0-9]+ ms"));
}

// What people used to kubectl and systemctl type: -o yaml, a ConfigMap to apply,
// NO_COLOR, a mistyped command; and what they are told without root.
TEST(Vfreadyctl, SpeaksYamlWrapsAConfigMapHonoursNoColorAndNamesAnUnknownCommand) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  PrivateBus bus(PrivateBus::Policy::kShipped);
  ServiceDaemon daemon(host, repo_config(), "--bus-address " + bus.address());
  ASSERT_TRUE(serving(daemon, bus));
  const auto parse_yaml = [](const std::string& text) {
    const auto r =
        sh("python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load("
           "sys.stdin)))' <<'EOF'\n" +
           text + "EOF");
    EXPECT_EQ(r.exit_code, 0) << r.err << text;
    return nlohmann::json::parse(r.exit_code == 0 ? r.out : "null");
  };
  // -o yaml is the JSON's data, as YAML.
  const auto json = sh(vfreadyctl(bus, "status -o json"));
  const auto yaml = sh(vfreadyctl(bus, "status -o yaml"));
  ASSERT_EQ(yaml.exit_code, 0) << yaml.err;
  auto from_yaml = parse_yaml(yaml.out);
  auto from_json = nlohmann::json::parse(json.out);
  EXPECT_EQ(from_yaml["pfs"], from_json["pfs"]);
  EXPECT_EQ(from_yaml["state"], "ready");
  EXPECT_EQ(parse_yaml(sh(vfreadyctl(bus, "describe ibs0 -o yaml")).out)["name"], "ibs0");

  // A ConfigMap whose config.json is what render prints.
  const auto plain = sh(vfreadyctl(bus, "render sriov-device-plugin"));
  const auto wrapped = sh(vfreadyctl(bus, "render sriov-device-plugin --configmap sriovdp-config"));
  ASSERT_EQ(wrapped.exit_code, 0) << wrapped.err;
  const auto map = parse_yaml(wrapped.out);
  EXPECT_EQ(map["kind"], "ConfigMap");
  EXPECT_EQ(map["metadata"]["name"], "sriovdp-config");
  EXPECT_EQ(map["metadata"]["namespace"], "kube-system");
  EXPECT_EQ(nlohmann::json::parse(map["data"]["config.json"].get<std::string>()),
            nlohmann::json::parse(plain.out));
  EXPECT_EQ(sh(vfreadyctl(bus, "render sriov-network-node-policy --configmap x")).exit_code, 1);

  // Colours on a terminal, unless NO_COLOR says otherwise.
  const auto coloured = sh(on_a_terminal(vfreadyctl(bus, "status")));
  EXPECT_THAT(coloured.out, HasSubstr("\x1b[32m"));
  const auto plain_tty = sh(on_a_terminal("NO_COLOR=1 " + vfreadyctl(bus, "status")));
  EXPECT_THAT(plain_tty.out, HasSubstr("ready"));
  EXPECT_EQ(plain_tty.out.find('\x1b'), std::string::npos) << plain_tty.out;

  const auto unknown = sh(vfreadyctl(bus, "stauts"));
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("vfreadyctl: unknown command 'stauts' (valid: status, "));
  EXPECT_EQ(daemon.stop(), 0);
}

// A status file that is not JSON: the file, where, and the parser's words without its tag.
TEST(Vfreadyctl, NamesWhereAStatusFileIsNotJsonInPlainWords) {
  VFREADY_REQUIRE_ROOT();
  PrivateBus bus(PrivateBus::Policy::kShipped);
  const auto dir = sh("mktemp -d").out;
  const auto file = dir.substr(0, dir.size() - 1) + "/status.json";
  sh("printf '{\"state\": ' > " + file);
  const auto r = sh(vfreadyctl(bus, "--status-file " + file + " status"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr(file + ": $.state: not valid JSON: parse error at line 1"));
  EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << r.err;
  sh("rm -r " + dir.substr(0, dir.size() - 1));
}

// A status file may hold any bytes (another process wrote it, or a netdev was named with
// them): what vfreadyctl prints of it reaches the terminal escaped, never as a sequence.
TEST(Vfreadyctl, PrintsAStatusFilesControlBytesEscaped) {
  VFREADY_REQUIRE_ROOT();
  PrivateBus bus(PrivateBus::Policy::kShipped);  // nothing owns the name: the file is read
  const auto dir = trimmed(sh("mktemp -d").out);
  const auto file = dir + "/status.json";
  std::ofstream(file)
      << R"({"state": "failed", "status": "x\u001b[31my\u009b1m", "node_ready": false,
    "generated_at": "2026-12-07T00:00:00Z", "pfs": [{"pci": "0000:18:00.0",
    "name": "ib\u001b]0;owned\u0007", "state": "failed", "vfs": [], "problems": [],
    "steps": []}]})";
  for (const char* command : {"status", "describe 0000:18:00.0", "wait --timeout 1"}) {
    const auto r = sh(vfreadyctl(bus, "--no-color --status-file " + file + " " + command));
    EXPECT_EQ((r.out + r.err).find('\x1b'), std::string::npos) << command << ": " << r.out << r.err;
    EXPECT_EQ((r.out + r.err).find('\x07'), std::string::npos) << command;
    EXPECT_EQ((r.out + r.err).find("\xc2\x9b"), std::string::npos) << command;
  }
  const auto shown = sh(vfreadyctl(bus, "--no-color --status-file " + file + " status"));
  EXPECT_THAT(shown.out, HasSubstr("x\\x1b[31my")) << shown.out;
  sh("rm -r " + dir);
}
