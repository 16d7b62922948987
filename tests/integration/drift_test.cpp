// SPDX-License-Identifier: Apache-2.0
// After READY vfreadyd keeps the node right: drift is seen by events (netlink, udev),
// reported on D-Bus and in the journal, and repaired where that is safe.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon_run.hpp"
#include "kernel_rules.hpp"
#include "private_bus.hpp"
#include "root_only.hpp"
#include "service_daemon.hpp"

using namespace vfready::testing;
using testing::HasSubstr;

namespace {

constexpr const char* kReady = "STATUS=ready: 8/8 PFs ready";

bool has_link(const FakeHost& host, const std::string& name) {
  return sh("ip -n " + host.netns() + " link show dev " + name).exit_code == 0;
}

int ifindex_of(const FakeHost& host, const std::string& name) {
  const auto r = sh("ip -n " + host.netns() + " -j link show dev " + name);
  return r.exit_code == 0 ? nlohmann::json::parse(r.out)[0]["ifindex"].get<int>() : 0;
}

}  // namespace

TEST(VfreadydDrift, AVfRecreatedWithAZeroGuidGetsItsNameAndGuidBack) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(5));
  PrivateBus bus(PrivateBus::Policy::kShipped);
  NotifySocket journal("journal/socket");
  ServiceDaemon daemon(host, repo_config(), "--bus-address " + bus.address(), "", journal.dir());
  ASSERT_TRUE(daemon.notify().wait_for("READY=1", 60s)) << daemon.log();
  const auto guid = trimmed(read_file(host.pci("0000:18:00.0", "sriov/3/port")));
  ASSERT_NE(guid, "00:00:00:00:00:00:00:00");

  // A driver reload of VF 3 without vfready: no GUID configured, a kernel-named netdev.
  const auto before = daemon.notify().count();
  const auto sys = host.root() + "/sys/bus/pci/";
  ASSERT_EQ(sh("echo 00:00:00:00:00:00:00:00 > " + sys +
               "devices/0000:18:00.0/sriov/3/port && "
               "echo 0000:18:00.4 > " +
               sys +
               "drivers/mlx5_core/unbind && "
               "echo 0000:18:00.4 > " +
               sys + "drivers/mlx5_core/bind")
                .exit_code,
            0);
  // The bound VF's netdev is not looked at here: vfready may be unbinding it again
  // already, and the link is then briefly gone.
  ASSERT_TRUE(daemon.notify().wait_for(kReady, 5s, before)) << daemon.log();
  EXPECT_TRUE(has_link(host, "ibs0v3"));
  EXPECT_FALSE(has_link(host, "ibp24s0v3"));
  EXPECT_EQ(trimmed(read_file(host.pci("0000:18:00.0", "sriov/3/port"))), guid);
  const auto link =
      nlohmann::json::parse(sh("ip -n " + host.netns() + " -d -j link show ibs0v3").out);
  EXPECT_EQ(link[0]["mtu"], 4092);

  // Seen on D-Bus and in the journal, naming the VF.
  const auto events = sh("busctl --address=" + bus.address() +
                         " get-property org.vfready.vfready1 /org/vfready/vfready1 "
                         "org.vfready.vfready1.Manager RecentEvents");
  EXPECT_THAT(events.out, HasSubstr("0000:18:00.4"));
  EXPECT_TRUE(journal.wait_for("VFREADY_VF=0000:18:00.4", 5s));
  EXPECT_EQ(daemon.stop(), 0);
  EXPECT_THAT(probes_the_kernel_refuses(host), testing::IsEmpty());
}

// The rebind races the repair: the pass that the netdev's removal starts looks at the VF
// while its new probe runs (bound, no netdev yet: it looks like a pod's) or just before
// (unbound: the pass's own probe finds it bound by then and its GUID comes too late).
// Each time the VF ends with its GUID and name, whichever way the race went.
TEST(VfreadydDrift, EveryRebindThatRacesTheRepairEndsRight) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference());  // the topology's 20 ms probe
  ServiceDaemon daemon(host, repo_config(), "--no-bus");
  ASSERT_TRUE(daemon.notify().wait_for("READY=1", 60s)) << daemon.log();
  const auto sys = host.root() + "/sys/bus/pci/";
  for (const auto& pf : kReferenceIbPfs) {
    const auto vf = pf.substr(0, 10) + ".1";
    const auto port = host.pci(pf, "sriov/0/port");
    const auto guid = trimmed(read_file(port));
    const auto before = daemon.notify().count();
    ASSERT_EQ(sh("echo 00:00:00:00:00:00:00:00 > " + port + " && echo " + vf + " > " + sys +
                 "drivers/mlx5_core/unbind && echo " + vf + " > " + sys + "drivers/mlx5_core/bind")
                  .exit_code,
              0);
    // Each "ready" after the writes, until the GUID is back: the first may be that of a
    // pass already under way (the last VF's second drift), which ends before this repair.
    bool back = false;
    for (auto from = before; !back && daemon.notify().wait_for(kReady, 10s, from);) {
      from = daemon.notify().count();
      back = trimmed(read_file(port)) == guid;
    }
    EXPECT_TRUE(back) << vf << ": " << trimmed(read_file(port)) << "\n" << daemon.log();
  }
  EXPECT_EQ(daemon.stop(), 0);
}

TEST(VfreadydDrift, AVfRenamedByOthersIsNamedBackAForeignHolderIsLeftAlone) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(5));
  ServiceDaemon daemon(host, repo_config(), "--no-bus");
  ASSERT_TRUE(daemon.notify().wait_for("READY=1", 60s)) << daemon.log();

  // Someone renames a managed VF: vfready names it back.
  auto before = daemon.notify().count();
  const int vf = ifindex_of(host, "ibs2v5");
  ASSERT_EQ(sh("ip -n " + host.netns() + " link set dev ibs2v5 name mine0").exit_code, 0);
  ASSERT_TRUE(daemon.notify().wait_for(kReady, 5s, before)) << daemon.log();
  EXPECT_EQ(ifindex_of(host, "ibs2v5"), vf);
  EXPECT_FALSE(has_link(host, "mine0"));
  EXPECT_THAT(daemon.log(), HasSubstr("renamed from ibs2v5 to mine0 by someone else"));

  // Someone renames another and gives its name to a device of their own: the foreign
  // device keeps it, the VF keeps the other name, and the conflict is reported.
  before = daemon.notify().count();
  const int other = ifindex_of(host, "ibs4v1");
  ASSERT_EQ(sh("ip -n " + host.netns() +
               " -batch - <<'EOF'\n"
               "link set dev ibs4v1 name theirs0\n"
               "link add ibs4v1 type ifb\n"
               "EOF")
                .exit_code,
            0);
  const int foreign = ifindex_of(host, "ibs4v1");
  ASSERT_NE(foreign, other);
  ASSERT_TRUE(daemon.notify().wait_for("STATUS=degraded: 7/8 PFs ready", 5s, before))
      << daemon.log();
  EXPECT_EQ(ifindex_of(host, "ibs4v1"), foreign);
  EXPECT_EQ(ifindex_of(host, "theirs0"), other);
  EXPECT_THAT(daemon.log(), HasSubstr("which vfready does not manage: left alone"));
}

// A rename that lands right after the repair named the link back (or while its pass
// runs) is repaired by a following pass: the pass that found the link misnamed again
// keeps the VF's drift open, whatever event comes next.
TEST(VfreadydDrift, ARenameLandingAsTheRepairNamesItBackIsRepairedToo) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(5));
  ServiceDaemon daemon(host, repo_config(), "--no-bus");
  ASSERT_TRUE(daemon.notify().wait_for("READY=1", 60s)) << daemon.log();
  const auto ip = "ip -n " + host.netns() + " link set dev ";
  for (int round = 0; round < 2; ++round) {
    const auto first = "first" + std::to_string(round);
    const auto second = "second" + std::to_string(round);
    // Renamed; then renamed again the moment vfready has named it back.
    const auto r = sh(ip + "ibs2v5 name " + first + " && for i in $(seq 3000); do " + ip +
                          "ibs2v5 name " + second + " 2>/dev/null && exit 0; done; exit 1",
                      60s);
    ASSERT_EQ(r.exit_code, 0) << "vfready never named it back: " << daemon.log();
    EXPECT_TRUE(
        wait_until([&] { return has_link(host, "ibs2v5") && !has_link(host, second); }, 10s))
        << "round " << round << ": left as " << second << "\n"
        << daemon.log();
  }
  EXPECT_TRUE(wait_until(
      [&] {
        const auto status = nlohmann::json::parse(
            read_file(host.root() + "/run/vfready/status.json"), nullptr, false);
        return status.is_object() && status.value("state", "") == "ready";
      },
      10s))
      << daemon.log();
  EXPECT_EQ(daemon.stop(), 0);
}

// Another tool that keeps renaming a link: vfready names it back at first, then stops
// fighting after a bound, says so naming the link and the other name, and names it back
// only once a minute while the renames go on.
TEST(VfreadydDrift, StopsFightingAToolThatKeepsRenamingALinkAndSaysSo) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(5));
  ServiceDaemon daemon(host, repo_config(), "--no-bus");
  ASSERT_TRUE(daemon.notify().wait_for("READY=1", 60s)) << daemon.log();
  // The other tool: renames the link whenever vfready has named it back (paced by its
  // own 20 ms).
  Background fighter("while true; do ip -n " + host.netns() +
                     " link set dev ibs2v5 name fighter0 2>/dev/null; sleep 0.02; done");
  const std::string said = "VF 0000:4f:00.6 (ibs2v5) was renamed to fighter0 more than 5 times";
  ASSERT_TRUE(wait_until([&] { return daemon.log().find(said) != std::string::npos; }, 60s))
      << daemon.log();
  const auto named_back = [&] {
    std::size_t n = 0;
    for (const auto& line : host.renames()) {
      n += line.find(" fighter0 ibs2v5") != std::string::npos ? 1 : 0;
    }
    return n;
  };
  const auto at_stop = named_back();
  // Named back at once at first (a rename that landed during a pass is named back by
  // the next one, so there may be fewer renames back than renames).
  EXPECT_GE(at_stop, 3u);
  // For the next 3 s (well inside the minute) it is left to the other tool.
  EXPECT_FALSE(wait_until([&] { return named_back() > at_stop + 1; }, 3s))
      << "still fighting: " << named_back() << " renames back";
  EXPECT_THAT(read_file(host.root() + "/run/vfready/status.json"), HasSubstr("name-contested"));
  // Its row says what the host has: the other tool's name, and the fight as its problem.
  const auto row = [&] {
    const auto status = nlohmann::json::parse(read_file(host.root() + "/run/vfready/status.json"));
    for (const auto& pf : status["pfs"]) {
      for (const auto& vf : pf["vfs"]) {
        if (vf["pci"] == "0000:4f:00.6") {
          return vf;
        }
      }
    }
    return nlohmann::json::object();
  };
  EXPECT_EQ(row().value("name", ""), "fighter0") << row().dump();
  EXPECT_EQ(row().value("state", ""), "failed") << row().dump();
  EXPECT_THAT(row()["problem_details"].dump(), HasSubstr("\"code\":\"name-contested\""));
  fighter.signal(SIGKILL);
  EXPECT_EQ(daemon.stop(), 0);
}

namespace {

nlohmann::json link_json(const FakeHost& host, const std::string& name) {
  const auto r = sh("ip -n " + host.netns() + " -j -d link show dev " + name);
  return r.exit_code == 0 ? nlohmann::json::parse(r.out)[0] : nlohmann::json::object();
}

bool has_altname(const FakeHost& host, const std::string& name, const std::string& alt) {
  const auto link = link_json(host, name);
  const auto alts = link.value("altnames", nlohmann::json::array());
  return std::find(alts.begin(), alts.end(), alt) != alts.end();
}

}  // namespace

// Another tool changes the MTU of a VF and of a PF, and deletes an altname of each:
// vfready sets each back, as it names links back, and says what it saw. (An altname is
// deleted here from a link that is up: for one that is down the kernel sends no link
// event, netdev_state_change() notifying only links that are up; the next pass restores
// it then.)
TEST(VfreadydDrift, AnMtuChangedOrAnAltnameDeletedByOthersIsSetBack) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(5));
  auto config = nlohmann::json::parse(read_file(repo_config()));
  config["pfs"][0]["pf_mtu"] = 4092;
  ServiceDaemon daemon(host, write_config(host, config.dump()), "--no-bus");
  ASSERT_TRUE(daemon.notify().wait_for("READY=1", 60s)) << daemon.log();
  const auto in_ns = "ip -n " + host.netns() + " ";
  for (const std::string link : {"ibs1v2", "ibs2"}) {
    SCOPED_TRACE(link);
    ASSERT_EQ(link_json(host, link).value("mtu", 0), 4092);
    auto before = daemon.notify().count();
    ASSERT_EQ(sh(in_ns + "link set dev " + link + " mtu 2044").exit_code, 0);
    // The repair's pass ends (a change made while it runs is another test's matter).
    ASSERT_TRUE(daemon.notify().wait_for_text("8/8 PFs ready", 10s, before)) << daemon.log();
    EXPECT_EQ(link_json(host, link).value("mtu", 0), 4092);
    EXPECT_THAT(daemon.log(), HasSubstr("(" + link + ") has MTU 2044, not 4092"));
    const auto alts = link_json(host, link).value("altnames", nlohmann::json::array());
    ASSERT_EQ(alts.size(), 1U) << alts.dump();
    const auto alt = alts[0].get<std::string>();
    ASSERT_EQ(sh(in_ns + "link set dev " + link + " up").exit_code, 0);
    before = daemon.notify().count();
    ASSERT_EQ(sh(in_ns + "link property del dev " + link + " altname " + alt).exit_code, 0);
    ASSERT_TRUE(daemon.notify().wait_for_text("8/8 PFs ready", 10s, before)) << daemon.log();
    EXPECT_TRUE(has_altname(host, link, alt)) << daemon.log();
    EXPECT_THAT(daemon.log(), HasSubstr("(" + link + ") lost its altname " + alt));
  }
  EXPECT_EQ(daemon.stop(), 0);
}
