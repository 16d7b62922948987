// SPDX-License-Identifier: Apache-2.0
// host::NetlinkLinks and host::HelperLinks against the kernel's own links, in a network
// namespace the test makes: a link is found by its name and by its altnames, short or
// long, and changed through a helper process.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>
#include <unistd.h>

#include <thread>

#include "process.hpp"
#include "root_only.hpp"
#include "vfready/host/helper_links.hpp"
#include "vfready/host/link_name.hpp"
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

// The drift watch's look at a link: its name now, asked without netlink (SIOCGIFNAME).
TEST(LinkName, IsTheNameALinkHasNowAndNoneOnceItIsGone) {
  VFREADY_REQUIRE_ROOT();
  const std::string ns = "vft-lname-" + std::to_string(getpid());
  ASSERT_EQ(sh("ip netns add " + ns).exit_code, 0);
  const auto made = sh("ip -n " + ns + " link add ifb-x type ifb");
  EXPECT_EQ(made.exit_code, 0) << made.err;
  in_netns(ns, [&] {
    vfready::host::NetlinkLinks links;
    const auto link = links.by_name("ifb-x");
    ASSERT_TRUE(link.has_value());
    EXPECT_EQ(vfready::host::link_name(link->ifindex), "ifb-x");
    ASSERT_EQ(links.rename(link->ifindex, "ibs0v7"), 0);
    EXPECT_EQ(vfready::host::link_name(link->ifindex), "ibs0v7");
    EXPECT_EQ(sh("ip -n " + ns + " link del ibs0v7").exit_code, 0);
    EXPECT_EQ(vfready::host::link_name(link->ifindex), std::nullopt);
    EXPECT_EQ(vfready::host::link_name(0), std::nullopt);
  });
  EXPECT_EQ(sh("ip netns del " + ns).exit_code, 0);
}

// The same requests made by a helper process (host::HelperLinks), started and answered
// as the pass awaits them: names, MTU and altnames change on a real link, and the
// kernel's errors come back as its errno.
TEST(HelperLinks, MakesEachRequestInAHelperAndAnswersWithTheKernelsErrno) {
  VFREADY_REQUIRE_ROOT();
  using vfready::host::LinkRequest;
  const std::string ns = "vft-hlinks-" + std::to_string(getpid());
  ASSERT_EQ(sh("ip netns add " + ns).exit_code, 0);
  const auto made =
      sh("ip -n " + ns + " link add ifb-a type ifb && ip -n " + ns + " link add ifb-b type ifb");
  EXPECT_EQ(made.exit_code, 0) << made.err;
  in_netns(ns, [] {
    vfready::host::HelperLinks links(std::make_shared<vfready::host::DeviceCalls>(),
                                     std::chrono::seconds(10));
    const auto make = [&](const LinkRequest& r) {
      auto call = links.start(r);
      EXPECT_GE(call->fd(), 0) << "made in a helper, not at once";
      pollfd p{call->fd(), POLLIN, 0};
      EXPECT_EQ(poll(&p, 1, 10'000), 1);
      return call->finish();
    };
    const auto a = make({LinkRequest::Kind::kByName, 0, "ifb-a"});
    ASSERT_EQ(a.err, 0);
    ASSERT_TRUE(a.link.has_value());
    const int ifindex = a.link->ifindex;
    EXPECT_EQ(make({LinkRequest::Kind::kSet, ifindex, "ib0v3", 2044}).err, 0);
    EXPECT_EQ(make({LinkRequest::Kind::kAddAltname, ifindex, "an-altname-longer-than-16"}).err, 0);
    const auto got = make({LinkRequest::Kind::kGet, ifindex});
    ASSERT_TRUE(got.link.has_value());
    EXPECT_EQ(got.link->name, "ib0v3");
    EXPECT_EQ(got.link->mtu, 2044U);
    EXPECT_THAT(got.link->altnames, testing::ElementsAre("an-altname-longer-than-16"));
    EXPECT_EQ(make({LinkRequest::Kind::kSet, ifindex, "ifb-b"}).err, EEXIST);
    EXPECT_EQ(make({LinkRequest::Kind::kDelAltname, ifindex, "an-altname-longer-than-16"}).err, 0);
    EXPECT_EQ(make({LinkRequest::Kind::kByName, 0, "an-altname-longer-than-16"}).err, ENODEV);
    EXPECT_EQ(make({LinkRequest::Kind::kSet, ifindex, "ib0v4"}).err, 0);
    EXPECT_EQ(make({LinkRequest::Kind::kGet, ifindex}).link->name, "ib0v4");
    EXPECT_EQ(make({LinkRequest::Kind::kByName, 0, "ib0v3"}).err, ENODEV);
  });
  EXPECT_EQ(sh("ip netns del " + ns).exit_code, 0);
}
