// SPDX-License-Identifier: Apache-2.0
// vfreadyd --once on the simulated DGX H200, with the reference config.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>

#include "daemon_run.hpp"
#include "kernel_rules.hpp"
#include "notify_socket.hpp"
#include "root_only.hpp"

using namespace vfready::testing;
using testing::Contains;
using testing::HasSubstr;
using testing::Not;

namespace {

const std::vector<std::string> kEthernetPfs = {"0000:29:00.0", "0000:29:00.1", "0000:aa:00.0",
                                               "0000:aa:00.1"};

struct LinkView {
  std::vector<std::string> altnames;
  int mtu = 0;
};

std::map<std::string, LinkView> links_of(const FakeHost& host) {
  auto r = sh("ip -n " + host.netns() + " -d -j link show");
  std::map<std::string, LinkView> out;
  for (const auto& l : nlohmann::json::parse(r.out)) {
    LinkView v;
    v.mtu = l.value("mtu", 0);
    if (l.contains("altnames")) {
      v.altnames = l["altnames"].get<std::vector<std::string>>();
    }
    out[l["ifname"].get<std::string>()] = v;
  }
  return out;
}

// The effective port GUID of every VF, by "PF/VF".
std::map<std::string, std::string> effective_guids(const FakeHost& host) {
  std::map<std::string, std::string> out;
  for (const auto& pf : kReferenceIbPfs) {
    for (int v = 0; v < 8; ++v) {
      auto g = read_file(host.pci(pf, "sriov/" + std::to_string(v) + "/port"));
      out[pf + "/" + std::to_string(v)] = g;
    }
  }
  return out;
}

std::string dashed(std::string pci) {
  std::replace(pci.begin(), pci.end(), ':', '-');
  return pci;
}

}  // namespace

TEST(VfreadydOnTheDgxH200, BringsUp64NamedVfsWithGuidsAndSignalsReady) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(20));
  NotifySocket notify;
  auto run = sh(vfreadyd_command(host, repo_config(), "--once", notify.path()), 120s);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(notify.wait_for("READY=1", 5s));
  EXPECT_THAT(notify.received(), Contains(HasSubstr("STATUS=Reading the host")));
  EXPECT_THAT(notify.received(), Contains(testing::ContainsRegex("STATUS=PFs:.* [0-9]+ guids,")));
  // Slow steps that make progress push systemd's start timeout out.
  EXPECT_THAT(notify.received(), Contains(testing::ContainsRegex("EXTEND_TIMEOUT_USEC=[0-9]+")));

  const auto links = links_of(host);
  for (std::size_t p = 0; p < kReferenceIbPfs.size(); ++p) {
    const auto pf_name = "ibs" + std::to_string(p);
    ASSERT_TRUE(links.contains(pf_name)) << pf_name;
    EXPECT_THAT(links.at(pf_name).altnames, Contains("ib-" + dashed(kReferenceIbPfs[p])));
    for (int v = 0; v < 8; ++v) {
      const auto name = pf_name + "v" + std::to_string(v);
      ASSERT_TRUE(links.contains(name)) << name;
      EXPECT_EQ(links.at(name).mtu, 4092) << name;
      auto vf_pci = host.pci(kReferenceIbPfs[p], "virtfn" + std::to_string(v));
      auto target = sh("basename $(readlink -f " + vf_pci + ")").out;
      target.pop_back();
      EXPECT_THAT(links.at(name).altnames, Contains("ib-" + dashed(target))) << name;
    }
  }
  std::set<std::string> unique;
  for (const auto& [vf, guid] : effective_guids(host)) {
    EXPECT_NE(guid, "00:00:00:00:00:00:00:00\n") << vf;
    EXPECT_TRUE(unique.insert(guid).second) << vf << " " << guid;
  }
  EXPECT_EQ(unique.size(), 64u);
  for (const auto& line : host.writes()) {
    for (const auto& eth : kEthernetPfs) {
      EXPECT_THAT(line, Not(HasSubstr(eth))) << "written to an Ethernet storage function";
    }
  }
  std::set<std::string> probed;
  for (const auto& line : host.probes()) {
    EXPECT_TRUE(probed.insert(line.substr(0, line.find(' '))).second) << "probed twice: " << line;
  }
  EXPECT_EQ(probed.size(), 64u);
  // Each VF asked for once, and only in a way the kernel honours (pci_device_can_probe()).
  EXPECT_THAT(probes_the_kernel_refuses(host), testing::IsEmpty());
  const auto writes = probe_writes_per_vf(host);
  EXPECT_EQ(writes.size(), 64u);
  for (const auto& [vf, count] : writes) {
    EXPECT_EQ(count, 1) << vf;
  }
}

TEST(VfreadydOnTheDgxH200, GivesTheSameGuidsOnAFreshHost) {
  VFREADY_REQUIRE_ROOT();
  std::map<std::string, std::string> first;
  {
    FakeHost host(TopologyBuilder::reference().probe_ms(1));
    ASSERT_EQ(sh(vfreadyd_command(host, repo_config()), 120s).exit_code, 0);
    first = effective_guids(host);
  }
  FakeHost again(TopologyBuilder::reference().probe_ms(1));
  ASSERT_EQ(sh(vfreadyd_command(again, repo_config()), 120s).exit_code, 0);
  EXPECT_EQ(effective_guids(again), first);
}

TEST(VfreadydOnTheDgxH200, WritesAndRenamesNothingOnASecondRun) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  const auto first = sh(vfreadyd_command(host, repo_config()), 120s);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  const auto writes = host.writes();
  const auto renames = host.renames();
  const auto links = links_of(host);
  NotifySocket notify;
  auto again = sh(vfreadyd_command(host, repo_config(), "--once", notify.path()), 120s);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(notify.wait_for("READY=1", 5s));
  EXPECT_EQ(host.writes(), writes);
  EXPECT_EQ(host.renames(), renames);
  EXPECT_EQ(links_of(host).size(), links.size());
}

TEST(VfreadydCheckConfig, PrintsThePlanAndTouchesNothing) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference());
  auto r = sh(vfreadyd_command(host, repo_config(), "--check-config"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("PF 0000:18:00.0 ibp24s0 -> ibs0: 0 -> 8 VFs"));
  EXPECT_THAT(r.out, HasSubstr("VF 3   0000:18:00.4  name - -> ibs0v3  GUID - -> "));
  EXPECT_TRUE(host.writes().empty());
  EXPECT_TRUE(host.renames().empty());
}

// What the host gave is echoed escaped: a netdev named with an escape sequence (the
// kernel takes any byte but '/', ':' and whitespace) never reaches the terminal raw.
TEST(VfreadydCheckConfig, EscapesControlBytesOfWhatTheHostGave) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference());
  ASSERT_EQ(sh("ip -n " + host.netns() + " link set ibp24s0 name $'ib\\e[31m'").exit_code, 0);
  ASSERT_TRUE(wait_until([&] { return !host.netdev_of("0000:18:00.0").starts_with("ibp"); }, 5s));
  auto r = sh(vfreadyd_command(host, repo_config(), "--check-config"));
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << "a raw escape byte on stdout";
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << "a raw escape byte on stderr";
  EXPECT_THAT(r.out, HasSubstr("PF 0000:18:00.0 ib\\x1b[31m -> ibs0"));
}

struct BadConfigCase {
  const char* name;
  const char* json;
  const char* message;
  friend void PrintTo(const BadConfigCase& c, std::ostream* os) { *os << c.name; }
};

class VfreadydCheckConfigRejects : public testing::TestWithParam<BadConfigCase> {};

TEST_P(VfreadydCheckConfigRejects, NamingTheJsonPath) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference());
  const auto config = write_config(host, GetParam().json);
  auto r = sh(vfreadyd_command(host, config, "--check-config"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr(config + ": "));
  EXPECT_THAT(r.err, HasSubstr(GetParam().message));
  EXPECT_TRUE(host.writes().empty());
}

INSTANTIATE_TEST_SUITE_P(
    BadConfigs, VfreadydCheckConfigRejects,
    testing::Values(
        BadConfigCase{"UnknownKey", R"({"pfs": [], "vfs": 8})", "$.vfs: unknown key"},
        BadConfigCase{"BadPci", R"({"pfs": [{"select": {"pci": "mlx5_0"}, "vfs": 8}]})",
                      "$.pfs[0].select.pci: invalid PCI address"},
        BadConfigCase{"NameTooLong", R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 8,
                      "vf_name": "infinibandport{vf}x"}]})",
                      "$.pfs[0].vf_name: template"},
        BadConfigCase{"NameTwice", R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 1,
                      "pf_name": "ib0", "vf_name": "ib{vf}"}]})",
                      "is also the name of"},
        BadConfigCase{"BadGuidScheme", R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 1,
                      "guid": {"scheme": "random"}}]})",
                      "$.pfs[0].guid.scheme: is \"random\""},
        BadConfigCase{"NumberOverflow",
                      R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 1e400}]})",
                      "$.pfs[0].vfs: not valid JSON"},
        BadConfigCase{"KeyTwice", R"({"pfs": [], "pfs": []})", "$.pfs: appears twice"},
        // ipoib_change_mtu() refuses more than 4092 in datagram mode.
        BadConfigCase{"IpoibMtu", R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 1,
                      "mtu": 9000}]})",
                      "$.pfs[0].mtu: is 9000; an IPoIB netdev (link_layer InfiniBand) takes 72 "
                      "to 4092"},
        // Names the kernel would refuse or rewrite: dev_valid_name(), dev_get_valid_name().
        BadConfigCase{"PercentInAName", R"({"pfs": [{"select": {"pci": "0000:18:00.0"},
                      "vfs": 1, "vf_name": "ib%d{vf}"}]})",
                      "$.pfs[0].vf_name: template \"ib%d{vf}\" gives invalid interface name"},
        BadConfigCase{"Latin1SpaceInAName", R"({"pfs": [{"select": {"pci": "0000:18:00.0"},
                      "vfs": 1, "pf_name": "ib\u00e0"}]})",
                      "only printable ASCII"},
        BadConfigCase{"NoBreakSpaceInAnAltname", R"({"pfs": [{"select": {"pci": "0000:18:00.0"},
                      "vfs": 1, "vf_altnames": ["gpu\u00a0{vf}"]}]})",
                      "$.pfs[0].vf_altnames"}),
    [](const testing::TestParamInfo<BadConfigCase>& info) { return info.param.name; });

// Valid configurations that a pass on this host would not bring up: --check-config says
// so with exit code 3 and the reason, and writes nothing.
class VfreadydCheckConfigGate : public testing::TestWithParam<BadConfigCase> {};

TEST_P(VfreadydCheckConfigGate, SaysThreeWhenThePlanDoesNotFitThisHost) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference());
  const auto config = write_config(host, GetParam().json);
  auto r = sh(vfreadyd_command(host, config, "--check-config"));
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_THAT(r.out + r.err, HasSubstr(GetParam().message));
  EXPECT_TRUE(host.writes().empty());
  EXPECT_TRUE(host.renames().empty());
}

INSTANTIATE_TEST_SUITE_P(
    NotOnThisHost, VfreadydCheckConfigGate,
    testing::Values(
        BadConfigCase{"MoreVfsThanTotalvfs",
                      R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 17}]})",
                      "offers 16 VFs, 17 configured"},
        BadConfigCase{"AbsentAddress",
                      R"({"pfs": [{"select": {"pci": "0000:77:00.0"}, "vfs": 2}]})",
                      "PF 0000:77:00.0 is not on this host"},
        BadConfigCase{"AStorageNic", R"({"pfs": [{"select": {"pci": "0000:29:00.0"}, "vfs": 2}]})",
                      "Ethernet"},
        BadConfigCase{"NameOfAStorageNic",
                      R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 2,
                      "pf_name": "enp41s0f0np0"}]})",
                      "the netdev of 0000:29:00.0, which vfready does not manage"},
        BadConfigCase{"SamePfTwice", R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 2},
                      {"select": {"device": "0x1021"}, "vfs": 2}]})",
                      "is selected here and by"},
        BadConfigCase{"DeviceNotHere", R"({"pfs": [{"select": {"device": "0x1017"}, "vfs": 2}]})",
                      "no PF on this host is a 0x1017"}),
    [](const testing::TestParamInfo<BadConfigCase>& info) { return info.param.name; });

// What is not a configuration file at all: refused at once, naming the path, with
// nothing written (a FIFO would block a reader; /dev/zero never ends).
class VfreadydRefusesAsConfig : public testing::TestWithParam<const char*> {};

TEST_P(VfreadydRefusesAsConfig, WhatIsNotARegularFileOfJson) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference());
  const std::string kind = GetParam();
  const auto path = host.root() + "/etc/not-a-config.json";
  sh("mkdir -p " + host.root() + "/etc");
  if (kind == "fifo") {
    ASSERT_EQ(sh("mkfifo " + path).exit_code, 0);
  } else if (kind == "zero") {
    ASSERT_EQ(sh("ln -s /dev/zero " + path).exit_code, 0);
  } else if (kind == "directory") {
    ASSERT_EQ(sh("mkdir " + path).exit_code, 0);
  } else {
    ASSERT_EQ(sh("python3 -c \"print('[' * 100000 + ']' * 100000)\" > " + path).exit_code, 0);
  }
  auto r = sh(vfreadyd_command(host, path, "--check-config"), 20s);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(path + ": "));
  EXPECT_TRUE(host.writes().empty());
}

INSTANTIATE_TEST_SUITE_P(NotConfigs, VfreadydRefusesAsConfig,
                         testing::Values("fifo", "zero", "directory", "deep"));
