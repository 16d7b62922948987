// SPDX-License-Identifier: Apache-2.0
// The fake host plays udevd toward libudev in its namespace: sysfs that libudev can look
// a netdev up in, the database entry that marks it initialized, and the monitor messages
// that announce it. Checked with libudev itself, run on the host (udev-events).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon_run.hpp"
#include "fake_host.hpp"
#include "process.hpp"
#include "root_only.hpp"

using namespace vfready::testing;
using testing::HasSubstr;
using testing::MatchesRegex;

namespace {

std::string udev_events(const FakeHost& host, const std::string& args) {
  return on_host(host) + VFREADY_UDEV_EVENTS_PATH " " + args;
}

int ifindex_of(const FakeHost& host, const std::string& name) {
  return std::stoi(trimmed(read_file(host.sys("class/net/" + name + "/ifindex"))));
}

}  // namespace

TEST(AFakeHostUdev, LetsLibudevFindANetdevAndSeeItInitialized) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference());
  const auto r =
      sh(udev_events(host, "initialized " + std::to_string(ifindex_of(host, "ibp24s0"))));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(trimmed(r.out), "1");
  EXPECT_THAT(read_file(host.sys("class/net/ibp24s0/uevent")),
              MatchesRegex("INTERFACE=ibp24s0\nIFINDEX=[0-9]+\n"));
  EXPECT_THAT(read_file(host.pci("0000:18:00.0", "uevent")),
              HasSubstr("DRIVER=mlx5_core\nPCI_ID=15B3:1021\nPCI_SLOT_NAME=0000:18:00.0\n"));
}

TEST(AFakeHostUdev, AnnouncesEachNewNetdevToMonitorsOnceItIsInitialized) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1).udev_latency_ms(200));
  const auto ready = host.root() + "/monitor-ready";
  Background listener(udev_events(host, "listen 2 10000 " + ready));
  ASSERT_TRUE(wait_until([&] { return exists(ready); }, 10s));
  ASSERT_EQ(sh("echo 2 > " + host.pci("0000:18:00.0", "sriov_numvfs")).exit_code, 0);
  // Before its latency has passed, udev has not finished with the new netdev.
  const auto early =
      sh(udev_events(host, "initialized " + std::to_string(ifindex_of(host, "ibp24s0v1"))));
  const auto r = listener.wait(10s);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, MatchesRegex("add [0-9]+ ibp24s0v[01]\nadd [0-9]+ ibp24s0v[01]\n"));
  EXPECT_EQ(trimmed(early.out), "0") << "initialized before udev's latency";
  const auto late =
      sh(udev_events(host, "initialized " + std::to_string(ifindex_of(host, "ibp24s0v1"))));
  EXPECT_EQ(trimmed(late.out), "1");
}

TEST(AFakeHostUdev, AnnouncesARenameAsAMove) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference());
  const auto ready = host.root() + "/monitor-ready";
  Background listener(udev_events(host, "listen 1 10000 " + ready));
  ASSERT_TRUE(wait_until([&] { return exists(ready); }, 10s));
  ASSERT_EQ(sh("ip -n " + host.netns() + " link set ibp24s0 name ibtest0").exit_code, 0);
  const auto r = listener.wait(10s);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, MatchesRegex("move [0-9]+ ibtest0\n"));
}
