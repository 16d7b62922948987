// SPDX-License-Identifier: Apache-2.0
// Quiet when idle: after READY vfreadyd wakes for events and the watchdog only.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon_run.hpp"
#include "private_bus.hpp"
#include "root_only.hpp"
#include "service_daemon.hpp"

using namespace vfready::testing;

TEST(VfreadydIdle, WakesOnlyForTheWatchdogOver30Seconds) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(5));
  PrivateBus bus(PrivateBus::Policy::kShipped);
  // WatchdogSec=2s: sd-event pings between a half and three quarters of it.
  ServiceDaemon daemon(host, repo_config(), "--bus-address " + bus.address(),
                       "WATCHDOG_USEC=2000000 ");
  ASSERT_TRUE(daemon.notify().wait_for("READY=1", 60s)) << daemon.log();
  // Settled: the bus is served and a ping has come since READY.
  ASSERT_TRUE(bus.wait_for_owner("org.vfready.vfready1"));
  ASSERT_TRUE(daemon.notify().wait_for("WATCHDOG=1", 3s, daemon.notify().count()));

  const pid_t pid = daemon.process().pid();
  const auto pings_before = daemon.notify().count("WATCHDOG=1");
  const auto switches_before = voluntary_switches(pid);
  // The watchdog is the clock: 30 pings, 30 to 45 seconds.
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
