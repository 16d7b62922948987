// SPDX-License-Identifier: Apache-2.0
// vfreadyd counts the calls it makes of the kernel (the operations a bring-up costs, the
// same on every machine). The count is checked against the fake host's own count of the
// FUSE requests it served, and a run with nothing to change writes nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon_run.hpp"
#include "fake_host.hpp"
#include "root_only.hpp"

using namespace vfready::testing;
using namespace std::chrono_literals;

TEST(VfreadydKernelCalls, AreTheWritesTheFakeHostServedAndNoneWhenNothingNeedsChanging) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  const auto before = host.fuse_requests();
  ASSERT_FALSE(before.empty());
  const auto first = sh(vfreadyd_command(host, repo_config(), "--once"), 60s);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const auto served = host.fuse_requests();
  const auto calls = logged_kernel_calls(first.err, "since start");
  ASSERT_FALSE(calls.empty()) << first.err;
  // Each sysfs write is one write(2), one FUSE WRITE: 8 PFs' numvfs and autoprobe, and per
  // VF at least its GUIDs and a probe.
  EXPECT_EQ(calls.at("sysfs writes"), served.at("write") - before.at("write"));
  EXPECT_GE(calls.at("sysfs writes"), 64u * 2);
  // Each VF's GUID is read back once at least. (Reads and FUSE opens need not match: a
  // read of a file that is not there, a module's version say, opens nothing.)
  EXPECT_GE(calls.at("sysfs reads"), 64u);
  // Per VF: one request for name and MTU, one for its altname (udev's add names the new
  // netdev, and validation takes naming's answers); at most a lookup by name and a read
  // more where udev's add came late. Per PF at most five.
  EXPECT_GE(calls.at("netlink requests"), 64u * 2);
  EXPECT_LE(calls.at("netlink requests"), 64u * 4 + 8u * 5) << first.err;

  const auto second = sh(vfreadyd_command(host, repo_config(), "--once"), 60s);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const auto again = logged_kernel_calls(second.err, "since the pass began");
  ASSERT_FALSE(again.empty()) << second.err;
  EXPECT_EQ(again.at("sysfs writes"), 0u) << second.err;
  // Nothing to change: each VF's netdev asked for (by name, its state), nothing set.
  EXPECT_LE(again.at("netlink requests"), 64u * 4 + 8u * 5) << second.err;
}
