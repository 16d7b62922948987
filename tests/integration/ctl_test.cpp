// SPDX-License-Identifier: Apache-2.0
// vfreadyctl as someone used to systemctl, networkctl and kubectl would use it: a
// reconcile queued behind a running pass and waited for, reload --wait.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <nlohmann/json.hpp>

#include "bus_commands.hpp"
#include "daemon_run.hpp"
#include "private_bus.hpp"
#include "root_only.hpp"
#include "service_daemon.hpp"

using namespace vfready::testing;
using testing::HasSubstr;

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
  ASSERT_EQ(::kill(host.pid(), SIGUSR1), 0);  // the module loads: the first pass goes on
  const auto r = reconcile.wait(60s);
  EXPECT_EQ(r.exit_code, 0) << r.err << daemon.log();
  EXPECT_EQ(r.out, "ready: 8/8 PFs ready\n");
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
