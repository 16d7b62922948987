// SPDX-License-Identifier: Apache-2.0
// vfreadyd under the kernel's rules, as the fake host plays them: VFs probed only while
// the PCI core lets them be, names udev has already given, and an old kernel that
// renames no netdev that is up.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon_run.hpp"
#include "kernel_rules.hpp"
#include "root_only.hpp"

using namespace vfready::testing;
using testing::Contains;
using testing::HasSubstr;
using testing::IsEmpty;
using testing::Not;
using testing::UnorderedElementsAre;

namespace {

constexpr const char* kPf = "0000:18:00.0";

// The reference config for PF 0000:18:00.0 alone, with `vfs` VFs.
nlohmann::json one_pf_config(int vfs) {
  auto config = nlohmann::json::parse(read_file(repo_config()));
  config["pfs"][0]["select"]["pci"] = {kPf};
  config["pfs"][0]["vfs"] = vfs;
  return config;
}

struct Link {
  std::string name;
  std::vector<std::string> altnames;
  bool up = false;
};

// The netdev of a PCI function, as `ip -d link` shows it.
Link link_of(const FakeHost& host, const std::string& pci) {
  Link out{host.netdev_of(pci), {}, false};
  const auto r = sh("ip -n " + host.netns() + " -j -d link show dev " + out.name);
  if (r.exit_code == 0) {
    const auto j = nlohmann::json::parse(r.out).at(0);
    out.altnames = j.value("altnames", std::vector<std::string>{});
    const auto flags = j.value("flags", std::vector<std::string>{});
    out.up = std::find(flags.begin(), flags.end(), "UP") != flags.end();
  }
  return out;
}

}  // namespace

// A predecessor died after it made the VFs with autoprobe off: the kernel probes none
// of them until autoprobe is on again, so vfready turns it on before its first probe.
TEST(VfreadydKernelRules, ProbesVfsAPredecessorLeftUnboundWithAutoprobeOff) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  ASSERT_EQ(sh("echo 0 > " + host.pci(kPf, "sriov_drivers_autoprobe") + " && echo 8 > " +
               host.pci(kPf, "sriov_numvfs"))
                .exit_code,
            0);
  ASSERT_FALSE(exists(host.pci("0000:18:00.1", "driver")));
  const auto r = sh(vfreadyd_command(host, write_config(host, one_pf_config(8).dump())), 60s);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(host.pci(kPf, "sriov_drivers_autoprobe")), "1\n");
  for (int v = 0; v < 8; ++v) {
    const auto vf =
        trimmed(sh("basename $(readlink " + host.pci(kPf, "virtfn" + std::to_string(v)) + ")").out);
    EXPECT_EQ(host.netdev_of(vf), "ibs0v" + std::to_string(v)) << vf;
  }
  EXPECT_THAT(probes_the_kernel_refuses(host), IsEmpty());
  EXPECT_EQ(host.probes().size(), 8u) << "one probe a VF";
}

// udev's path policy names the VF's netdev ibp24s0v<N> and gives it its slot name
// ibs1v<N> as an altname: vfready's configured name. The kernel refuses a rename to a
// netdev's own altname (EEXIST), so vfready drops that altname first; the path name it
// wants as an altname is free once the netdev is renamed.
TEST(VfreadydUdevNames, TakesAConfiguredNameThatUdevGaveTheNetdevAsAnAltname) {
  VFREADY_REQUIRE_ROOT();
  auto topology = TopologyBuilder::reference().probe_ms(1).udev_name_policy("path");
  topology.function(kPf)["slot"] = "1";
  FakeHost host(topology);
  auto config = one_pf_config(2);
  config["pfs"][0]["vf_name"] = "ibs1v{vf}";
  config["pfs"][0]["vf_altnames"] = {"ibp24s0v{vf}"};
  const auto r = sh(vfreadyd_command(host, write_config(host, config.dump())), 60s);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("File exists")));
  for (int v = 0; v < 2; ++v) {
    const auto link = link_of(host, "0000:18:00." + std::to_string(v + 1));
    EXPECT_EQ(link.name, "ibs1v" + std::to_string(v));
    EXPECT_THAT(link.altnames, UnorderedElementsAre("ibp24s0v" + std::to_string(v)));
    EXPECT_TRUE(host.renamed(" ibp24s0v" + std::to_string(v) + " ibs1v" + std::to_string(v)))
        << testing::PrintToString(host.renames());
  }
}

// udev's slot policy names it ibs1v<N> (vfready's name) with the path name as an
// altname, which vfready wants as an altname too: nothing to rename, nothing to add,
// no error.
TEST(VfreadydUdevNames, KeepsANameAndAltnameUdevAlreadyGaveAsConfigured) {
  VFREADY_REQUIRE_ROOT();
  auto topology = TopologyBuilder::reference().probe_ms(1).udev_name_policy("slot");
  topology.function(kPf)["slot"] = "1";
  FakeHost host(topology);
  auto config = one_pf_config(2);
  config["pfs"][0]["vf_name"] = "ibs1v{vf}";
  config["pfs"][0]["vf_altnames"] = {"ibp24s0v{vf}"};
  const auto r = sh(vfreadyd_command(host, write_config(host, config.dump())), 60s);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int v = 0; v < 2; ++v) {
    const auto link = link_of(host, "0000:18:00." + std::to_string(v + 1));
    EXPECT_EQ(link.name, "ibs1v" + std::to_string(v));
    EXPECT_THAT(link.altnames, UnorderedElementsAre("ibp24s0v" + std::to_string(v)));
  }
  for (const auto& rename : host.renames()) {
    EXPECT_THAT(rename, Not(HasSubstr(" ibs1v0 "))) << "renamed away from its name";
  }
}

// Before Linux 6.2 the kernel renames no netdev that is up (EBUSY). vfready reads the
// release, never sets a link down behind its users' back, says why and what to do, and
// goes on with the rest.
TEST(VfreadydOldKernel, LeavesAnUpVfNetdevItWouldRenameAsItIsAndSaysWhy) {
  VFREADY_REQUIRE_ROOT();
  auto topology = TopologyBuilder::reference().probe_ms(1);
  topology.json()["kernel"]["release"] = "5.15.0-91-generic";
  FakeHost host(topology);
  const auto path = write_config(host, one_pf_config(2).dump());
  ASSERT_EQ(sh(vfreadyd_command(host, path), 60s).exit_code, 0) << "links are down at creation";
  // Someone set VF 0's netdev up and renamed it (this machine's kernel allows that).
  const auto ip = "ip -n " + host.netns() + " link set ";
  ASSERT_EQ(sh(ip + "ibs0v0 up && " + ip + "ibs0v0 name other0").exit_code, 0);
  ASSERT_TRUE(wait_until([&] { return host.netdev_of("0000:18:00.1") == "other0"; }, 5s));
  const auto renames_before = host.renames().size();

  const auto r = sh(vfreadyd_command(host, path), 60s);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("netdev other0 is up, and kernel 5.15.0-91-generic renames no "
                               "netdev that is up (Linux 6.2 and later do): left as other0, not "
                               "renamed to ibs0v0"));
  EXPECT_THAT(r.err, HasSubstr("ip link set other0 down"));
  const auto link = link_of(host, "0000:18:00.1");
  EXPECT_EQ(link.name, "other0");
  EXPECT_TRUE(link.up) << "never set down";
  EXPECT_EQ(host.renames().size(), renames_before);
  EXPECT_EQ(host.netdev_of("0000:18:00.2"), "ibs0v1") << "the rest goes on";
}
