// SPDX-License-Identifier: Apache-2.0
// Quiet when idle: after READY vfreadyd wakes for events and the watchdog only.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "daemon_run.hpp"
#include "private_bus.hpp"
#include "root_only.hpp"
#include "service_daemon.hpp"

using namespace vfready::testing;

namespace {

// Voluntary context switches of every thread of `pid`: each is a sleep it woke from.
uint64_t voluntary_switches(pid_t pid) {
  uint64_t total = 0;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::ifstream in(task.path() / "status");
    std::string line;
    while (std::getline(in, line)) {
      if (line.starts_with("voluntary_ctxt_switches:")) {
        total += std::stoull(line.substr(line.find(':') + 1));
      }
    }
  }
  return total;
}

}  // namespace

TEST(VfreadydIdle, WakesOnlyForTheWatchdogOver30Seconds) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(5));
  PrivateBus bus(PrivateBus::Policy::kShipped);
  // WatchdogSec=2s: a ping every second.
  ServiceDaemon daemon(host, repo_config(), "--bus-address " + bus.address(),
                       "WATCHDOG_USEC=2000000 ");
  ASSERT_TRUE(daemon.notify().wait_for("READY=1", 60s)) << daemon.log();
  // Settled: the bus is served and a ping has come since READY.
  ASSERT_TRUE(wait_until(
      [&] {
        return sh("busctl --address=" + bus.address() + " status org.vfready.vfready1", 5s)
                   .exit_code == 0;
      },
      20s));
  ASSERT_TRUE(daemon.notify().wait_for("WATCHDOG=1", 3s, daemon.notify().count()));

  const pid_t pid = daemon.process().pid();
  const auto pings_before = daemon.notify().count("WATCHDOG=1");
  const auto switches_before = voluntary_switches(pid);
  // The watchdog is the clock: 30 pings, 30 seconds.
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(daemon.notify().wait_for("WATCHDOG=1", 3s, daemon.notify().count()));
  }
  const auto switches = voluntary_switches(pid) - switches_before;
  const auto pings = daemon.notify().count("WATCHDOG=1") - pings_before;
  std::cout << "idle: " << switches << " voluntary context switches over " << pings
            << " watchdog pings\n";
  EXPECT_LE(switches, pings + 5);
  EXPECT_EQ(daemon.stop(), 0);
}
