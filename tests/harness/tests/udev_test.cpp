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
  Background listener(udev_events(host, "listen 4 10000 " + ready));
  ASSERT_TRUE(wait_until([&] { return exists(ready); }, 10s));
  ASSERT_EQ(sh("echo 2 > " + host.pci("0000:18:00.0", "sriov_numvfs")).exit_code, 0);
  // Before its latency has passed, udev has not finished with the new netdev, which
  // still has the driver's name.
  const auto kernel_name = host.netdev_of("0000:18:00.2");
  const auto ifindex = ifindex_of(host, kernel_name);
  const auto early = sh(udev_events(host, "initialized " + std::to_string(ifindex)));
  const auto r = listener.wait(10s);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // udevd's add names the netdev as its rules renamed it; the kernel's move of that
  // rename is handled (and sent) after the add.
  EXPECT_THAT(r.out, MatchesRegex("add [0-9]+ ibp24s0v[01]\nmove [0-9]+ ibp24s0v[01]\n"
                                  "add [0-9]+ ibp24s0v[01]\nmove [0-9]+ ibp24s0v[01]\n"));
  EXPECT_THAT(kernel_name, MatchesRegex("ib[0-9]+"));
  EXPECT_EQ(trimmed(early.out), "0") << "initialized before udev's latency";
  const auto late = sh(udev_events(host, "initialized " + std::to_string(ifindex)));
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

namespace {

// The name and the altnames of the netdev of a PCI function, as `ip -d link` shows them.
std::pair<std::string, std::vector<std::string>> names_of(const FakeHost& host,
                                                          const std::string& pci) {
  const auto name = host.netdev_of(pci);
  const auto r = sh("ip -n " + host.netns() + " -j -d link show dev " + name);
  std::vector<std::string> altnames;
  if (r.exit_code == 0) {
    const auto link = nlohmann::json::parse(r.out).at(0);
    if (link.contains("altnames")) {
      altnames = link["altnames"].get<std::vector<std::string>>();
    }
  }
  return {name, altnames};
}

struct PolicyCase {
  const char* policy;
  const char* name;  // what the VF's netdev is called once udev is done ("" = ib%d)
  std::vector<std::string> altnames;
};

class AFakeHostUdevNaming : public testing::TestWithParam<PolicyCase> {};

}  // namespace

// 99-default.link's NamePolicy= picks the name, AlternativeNamesPolicy= adds the other
// predictable names as altnames (src/udev/net/link-config.c); a VF's names are its PF's
// with "v<N>" (udev-builtin-net_id.c, get_virtfn_info()).
TEST_P(AFakeHostUdevNaming, NamesANewVfNetdevAndGivesItTheOtherPredictableNames) {
  VFREADY_REQUIRE_ROOT();
  const auto& c = GetParam();
  auto topology = TopologyBuilder::reference().probe_ms(1).udev_name_policy(c.policy);
  topology.function("0000:18:00.0")["slot"] = "3";
  FakeHost host(topology);
  ASSERT_EQ(sh("echo 1 > " + host.pci("0000:18:00.0", "sriov_numvfs")).exit_code, 0);
  // Initialized (udev is done with it) only after its rules have named it.
  ASSERT_TRUE(wait_until([&] { return !exists(host.root() + "/run/udev/queue"); }, 5s));
  const auto [name, altnames] = names_of(host, "0000:18:00.1");
  if (std::string(c.name).empty()) {
    EXPECT_THAT(name, MatchesRegex("ib[0-9]+"));
  } else {
    EXPECT_EQ(name, c.name);
  }
  EXPECT_EQ(altnames, c.altnames);
}

INSTANTIATE_TEST_SUITE_P(Policies, AFakeHostUdevNaming,
                         testing::Values(PolicyCase{"path", "ibp24s0v0", {"ibs3v0"}},
                                         PolicyCase{"slot", "ibs3v0", {"ibp24s0v0"}},
                                         PolicyCase{"keep", "", {"ibs3v0", "ibp24s0v0"}},
                                         PolicyCase{"none", "", {}}),
                         [](const testing::TestParamInfo<PolicyCase>& info) {
                           return std::string(info.param.policy);
                         });

// udevd handles one device's events one after another: a netdev renamed by someone
// before udevd handled its add has its move announced after the add, never before.
TEST(AFakeHostUdev, AnnouncesAMoveOfANetdevItHasNotHandledAfterItsAdd) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1).udev_latency_ms(500));
  const auto ready = host.root() + "/monitor-ready";
  Background listener(udev_events(host, "listen 3 10000 " + ready));
  ASSERT_TRUE(wait_until([&] { return exists(ready); }, 10s));
  ASSERT_EQ(sh("echo 1 > " + host.pci("0000:18:00.0", "sriov_numvfs")).exit_code, 0);
  const auto kernel_name = host.netdev_of("0000:18:00.1");
  const auto ns = "ip -n " + host.netns() + " link set ";
  ASSERT_EQ(sh(ns + kernel_name + " name mine0 && " + ns + "mine0 name mine1").exit_code, 0);
  const auto r = listener.wait(10s);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // Its name stays (NamePolicy=keep), and both moves follow the add, in order.
  EXPECT_THAT(r.out, MatchesRegex("add [0-9]+ mine1\nmove [0-9]+ mine1\nmove [0-9]+ mine1\n"));
}

TEST(AUdevMonitor, HearsOnlyUdevdsMulticastsFromRoot) {
  VFREADY_REQUIRE_ROOT();
  // As sd-device's monitor: a message sent to the socket alone (no sender is trusted) or
  // by someone not root (a user given CAP_NET_ADMIN in the namespace) is not udevd's.
  FakeHost host(TopologyBuilder::reference());
  const auto ready = host.root() + "/monitor-ready";
  Background listener(udev_events(host, "listen 1 10000 " + ready));
  ASSERT_TRUE(wait_until([&] { return exists(ready); }, 10s));
  const auto port = trimmed(read_file(ready));
  const std::string under = " /devices/pci0000:00/0000:00:01.0/0000:18:00.2/net/";
  for (const auto& from :
       {"uid:65534 add 901" + under + "forged0", "unicast:" + port + " add 902" + under + "forged1",
        "root add 903" + under + "real0"}) {
    const auto r = sh(udev_events(host, "send " + from));
    ASSERT_EQ(r.exit_code, 0) << from << ": " << r.err;
  }
  const auto r = listener.wait(10s);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "add 903 real0\n");
}

TEST(AUdevMonitor, CountsAMessageCutShortAsLostEventsOnlyFromRoot) {
  VFREADY_REQUIRE_ROOT();
  // Longer than the 8 KiB a monitor reads of one (more than udevd sends): it might have
  // been a netdev's add, so events count as lost; from someone not root it is dropped.
  FakeHost host(TopologyBuilder::reference());
  const auto ready = host.root() + "/monitor-ready";
  Background listener(udev_events(host, "listen 2 10000 " + ready));
  ASSERT_TRUE(wait_until([&] { return exists(ready); }, 10s));
  const std::string under = " /devices/pci0000:00/0000:00:01.0/0000:18:00.2/net/";
  for (const auto& from :
       {"uid:65534 add 901" + under + "forged0 10000", "root add 902" + under + "long0 10000",
        "root add 903" + under + "real0"}) {
    const auto r = sh(udev_events(host, "send " + from));
    ASSERT_EQ(r.exit_code, 0) << from << ": " << r.err;
  }
  const auto r = listener.wait(10s);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "lost\nadd 903 real0\n");
}
