// SPDX-License-Identifier: Apache-2.0
// host::NetlinkLinks against the kernel's own links, in a network namespace the test
// makes: a link is found by its name and by its altnames, short or long.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <thread>

#include "process.hpp"
#include "root_only.hpp"
#include "vfready/host/links.hpp"

using namespace vfready::testing;

namespace {

// Runs `body` on a thread that has joined the namespace `netns` (only that thread).
template <class F>
void in_netns(const std::string& netns, F body) {
  std::thread t([&] {
    const int fd = open(("/run/netns/" + netns).c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(setns(fd, CLONE_NEWNET), 0);
    close(fd);
    body();
  });
  t.join();
}

}  // namespace

TEST(NetlinkLinks, FindsALinkByItsNameOrEitherKindOfAltname) {
  VFREADY_REQUIRE_ROOT();
  const std::string ns = "vft-links-" + std::to_string(getpid());
  ASSERT_EQ(sh("ip netns add " + ns).exit_code, 0);
  const auto made = sh("ip -n " + ns + " link add ibs0v3 type ifb && ip -n " + ns +
                       " link property add dev ibs0v3 altname ib-0000-18-00.4 altname "
                       "an-altname-longer-than-fifteen-bytes");
  EXPECT_EQ(made.exit_code, 0) << made.err;
  in_netns(ns, [] {
    vfready::host::NetlinkLinks links;
    const auto by_name = links.by_name("ibs0v3");
    ASSERT_TRUE(by_name.has_value());
    EXPECT_EQ(by_name->name, "ibs0v3");
    for (const char* alt : {"ib-0000-18-00.4", "an-altname-longer-than-fifteen-bytes"}) {
      const auto by_alt = links.by_name(alt);
      ASSERT_TRUE(by_alt.has_value()) << alt;
      EXPECT_EQ(by_alt->ifindex, by_name->ifindex) << alt;
      EXPECT_THAT(by_alt->altnames, testing::Contains(alt));
    }
    EXPECT_FALSE(links.by_name("ibs0v4").has_value());
  });
  EXPECT_EQ(sh("ip netns del " + ns).exit_code, 0);
}
