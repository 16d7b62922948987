// SPDX-License-Identifier: Apache-2.0
// What an operator reads when PFs fail: one PF whose sriov_numvfs write fails (EIO) and
// one whose port is DOWN, through the status table, the metrics, the NFD labels, render
// and the log; and a later pass's duration, not the time since the daemon started.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "bus_commands.hpp"
#include "daemon_run.hpp"
#include "private_bus.hpp"
#include "root_only.hpp"
#include "service_daemon.hpp"

using namespace vfready::testing;
using testing::ContainsRegex;
using testing::HasSubstr;
using testing::Not;

namespace {

constexpr const char* kNumvfsFails = "0000:40:00.0";
constexpr const char* kPortDown = "0000:4f:00.0";

TopologyBuilder two_failures() {
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.function(kNumvfsFails)["faults"] = {{"numvfs_errno", "EIO"}};
  t.function(kPortDown)["infiniband"]["ports"][0]["state"] = "1: DOWN";
  return t;
}

// The reference configuration, its NFD and metrics files under the host's root, the
// port's wait short.
std::string config_publishing(const FakeHost& host) {
  sh("mkdir -p " + host.root() + "/nfd " + host.root() + "/prom");
  auto config = nlohmann::json::parse(read_file(repo_config()));
  config["timeouts"] = {{"port_active_ms", 300}};
  config["publish"] = {{"nfd_file", host.root() + "/nfd/vfready"},
                       {"metrics_file", host.root() + "/prom/vfready.prom"}};
  return write_config(host, config.dump(2));
}

}  // namespace

TEST(AFailedPf, IsReportedAsItIsInTheTableMetricsLabelsRenderAndLog) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(two_failures());
  const auto config = config_publishing(host);
  const auto first = sh(vfreadyd_command(host, config, "--once"), 60s);
  ASSERT_EQ(first.exit_code, 0) << first.err;  // degraded, and "degraded": "ready"
  // The configured count and the port as read, whichever step failed.
  EXPECT_THAT(first.out,
              ContainsRegex("0000:40:00.0 +ibp64s0 +failed +InfiniBand +ACTIVE +0/8 +- +1\n"));
  EXPECT_THAT(
      first.out,
      ContainsRegex("0000:4f:00.0 +ibs2 +failed +InfiniBand +DOWN +8/8 +ibs2v0..ibs2v7 +1\n"));

  const auto metrics = read_file(host.root() + "/prom/vfready.prom");
  // Labelled by configured name, whether or not the netdev got it.
  EXPECT_THAT(metrics, HasSubstr("vfready_port_active{pf=\"0000:40:00.0\",name=\"ibs1\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("vfready_port_active{pf=\"0000:4f:00.0\",name=\"ibs2\"} 0\n"));
  EXPECT_THAT(metrics, HasSubstr("vfready_pf_ready{pf=\"0000:40:00.0\",name=\"ibs1\"} 0\n"));
  EXPECT_THAT(metrics, Not(HasSubstr("ibp64s0")));
  // VFs ready: those of the six ready PFs, not the DOWN port's eight.
  const auto labels = read_file(host.root() + "/nfd/vfready");
  EXPECT_THAT(labels, HasSubstr("vfready.io/pfs-ready=6\n"));
  EXPECT_THAT(labels, HasSubstr("vfready.io/vfs=48\n"));
  EXPECT_THAT(labels, HasSubstr("vfready.io/vfs-configured=64\n"));

  // A second run changes nothing, and does not call that "needed": a write failed.
  const auto second = sh(vfreadyd_command(host, config, "--once"), 60s);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_THAT(second.out, HasSubstr("\nChanged: nothing\n"));
  EXPECT_THAT(second.err, HasSubstr("PFs ready in "));
  EXPECT_THAT(second.err, HasSubstr(" ms; nothing changed"));
  EXPECT_THAT(second.out + second.err, Not(HasSubstr("nothing needed changing")));

  // render, from the status file the runs left: the config, and on stderr the PFs that
  // are in it but not ready.
  PrivateBus bus(PrivateBus::Policy::kShipped);
  const auto render = sh(vfreadyctl(bus, "--status-file " + host.root() +
                                             "/run/vfready/status.json render "
                                             "sriov-device-plugin"));
  ASSERT_EQ(render.exit_code, 0) << render.err;
  const auto pf_names =
      nlohmann::json::parse(render.out)["resourceList"][0]["selectors"][0]["pfNames"];
  EXPECT_EQ(pf_names.size(), 8U) << render.out;
  EXPECT_THAT(render.err, HasSubstr("vfreadyctl: warning: PF 0000:40:00.0 (ibs1) is failed, not "
                                    "ready: it is in the output as configured"));
  EXPECT_THAT(render.err, HasSubstr("vfreadyctl: warning: PF 0000:4f:00.0 (ibs2) is failed"));
  EXPECT_THAT(render.err, Not(HasSubstr("0000:18:00.0")));
}

TEST(APassOutcome, IsGivenAfterThePassDurationNotTheTimeSinceStart) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  PrivateBus bus(PrivateBus::Policy::kShipped);
  ServiceDaemon daemon(host, repo_config(), "--bus-address " + bus.address());
  ASSERT_TRUE(serving(daemon, bus));
  const auto status = [&] {
    const auto r = sh(vfreadyctl(bus, "status --json"));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const double first = status()["ready_ms"];
  ASSERT_EQ(sh(vfreadyctl(bus, "reconcile")).exit_code, 0);
  nlohmann::json after;
  ASSERT_TRUE(wait_until(
      [&] {
        after = status();
        return after["ready_ms"].is_number() && after["ready_ms"].get<double>() > first;
      },
      30s))
      << after.dump();
  // The reconcile's pass began after the first outcome.
  const double pass = after["pass_ms"];
  EXPECT_LE(pass, after["ready_ms"].get<double>() - first) << after.dump();
  const auto table = sh(vfreadyctl(bus, "status"));
  EXPECT_THAT(table.out, HasSubstr(", outcome after " + std::to_string(static_cast<long>(pass)) +
                                   " ms\nChanged: nothing needed changing\n"));
}
