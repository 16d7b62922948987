// SPDX-License-Identifier: Apache-2.0
// Stopping and restarting: SIGTERM leaves everything in place and exits promptly even
// with a write blocked in the kernel; SIGKILL at any step, then a restart, ends where a
// clean run ends, without destroying a VF in use or changing a GUID.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include "daemon_run.hpp"
#include "kernel_rules.hpp"
#include "root_only.hpp"
#include "service_daemon.hpp"

using namespace vfready::testing;
using testing::HasSubstr;

namespace {

// "PF/VF" -> "name GUID" for every VF: what a run leaves.
std::map<std::string, std::string> vf_state(const FakeHost& host) {
  std::map<std::string, std::string> out;
  for (const auto& pf : kReferenceIbPfs) {
    for (int v = 0; v < 8; ++v) {
      const auto dir = "virtfn" + std::to_string(v) + "/net";
      const auto names = sh("ls " + host.pci(pf, dir)).out;
      out[pf + "/" + std::to_string(v)] =
          trimmed(names) + " " +
          trimmed(read_file(host.pci(pf, "sriov/" + std::to_string(v) + "/port")));
    }
  }
  return out;
}

}  // namespace

TEST(VfreadydStop, SigtermExitsPromptlyWhileASysfsWriteIsBlocked) {
  VFREADY_REQUIRE_ROOT();
  auto topology = TopologyBuilder::reference().probe_ms(5);
  topology.function("0000:40:00.0")["faults"] = {{"numvfs_write_hangs", true}};
  FakeHost host(topology);
  ServiceDaemon daemon(host, repo_config(), "--no-bus");
  // Seven PFs finish; the eighth stays in its write (numvfs_ms is 60 s by default).
  ASSERT_TRUE(daemon.notify().wait_for("STATUS=7/8 PFs done", 60s)) << daemon.log();
  // Off while its VFs are made (numvfs_ms has not passed: the pass is still under way).
  ASSERT_EQ(read_file(host.pci("0000:40:00.0", "sriov_drivers_autoprobe")), "0\n");
  daemon.process().signal(SIGTERM);
  const auto exit = daemon.process().wait(5s);
  EXPECT_FALSE(exit.timed_out) << "vfreadyd did not exit within 5 s of SIGTERM";
  EXPECT_EQ(exit.exit_code, 0);
  EXPECT_TRUE(daemon.notify().wait_for("STOPPING=1", 1s));
  // What was done stays.
  EXPECT_EQ(sh("ip -n " + host.netns() + " link show dev ibs7v7").exit_code, 0);
  EXPECT_EQ(trimmed(read_file(host.pci("0000:dc:00.0", "sriov_numvfs"))), "8");
  // The pass in the hung write had turned its PF's autoprobe off: the daemon's end, which
  // unwinds no pass, turned it on again.
  EXPECT_EQ(read_file(host.pci("0000:40:00.0", "sriov_drivers_autoprobe")), "1\n");
}

TEST(VfreadydRestart, SigkillAtEveryStepThenRestartEndsLikeACleanRun) {
  VFREADY_REQUIRE_ROOT();
  // What a clean run leaves, on a host of its own.
  std::map<std::string, std::string> clean;
  {
    FakeHost fresh(TopologyBuilder::reference().probe_ms(5));
    ASSERT_EQ(sh(vfreadyd_command(fresh, repo_config()), 120s).exit_code, 0);
    clean = vf_state(fresh);
  }

  FakeHost host(TopologyBuilder::reference().probe_ms(5));
  const std::vector<std::string> steps = {"hardware", "vfs", "guids", "udev", "names", "validate"};
  std::set<std::string> killed_in;
  std::string pod;
  std::size_t writes_at_pod = 0;
  for (int i = 0; i < 24; ++i) {
    const auto& step = steps[static_cast<std::size_t>(i) % steps.size()];
    ServiceDaemon daemon(host, repo_config(), "--no-bus");
    // The i-th kill lands when some PF has just started `step`.
    if (daemon.notify().wait_for_text(" " + step + ",", 60s) &&
        !daemon.notify().wait_for("READY=1", 0ms)) {
      killed_in.insert(step);
    }
    daemon.process().signal(SIGKILL);
    ASSERT_FALSE(daemon.process().wait(10s).timed_out);
    if (i == 11) {
      // Halfway, a pod takes VF 2 of PF 0000:40:00.0, wherever the bring-up was.
      if (sh("ip -n " + host.netns() + " link show dev ibs1v2").exit_code == 0 ||
          sh("ip -n " + host.netns() + " link show dev ibp64s0v2").exit_code == 0) {
        pod = host.netns() + "-pod";
        const auto name = sh("ip -n " + host.netns() + " link show dev ibs1v2").exit_code == 0
                              ? "ibs1v2"
                              : "ibp64s0v2";
        ASSERT_EQ(sh("ip netns add " + pod + " && ip -n " + host.netns() + " link set " + name +
                     " netns " + pod)
                      .exit_code,
                  0);
        writes_at_pod = host.writes().size();
      }
    }
  }
  EXPECT_EQ(killed_in, std::set<std::string>(steps.begin(), steps.end()))
      << "a kill landed in each step";

  // The restart that is let finish.
  ServiceDaemon last(host, repo_config(), "--no-bus");
  // A VF in a pod is in use, not a problem: the node is ready.
  ASSERT_TRUE(last.notify().wait_for("READY=1", 60s)) << last.log();
  EXPECT_EQ(last.stop(), 0);

  auto state = vf_state(host);
  if (!pod.empty()) {
    // The pod's VF has no netdev here; its GUID is what it was.
    EXPECT_EQ(state["0000:40:00.0/2"].substr(state["0000:40:00.0/2"].find(' ')),
              clean["0000:40:00.0/2"].substr(clean["0000:40:00.0/2"].find(' ')));
    state.erase("0000:40:00.0/2");
    clean.erase("0000:40:00.0/2");
    for (std::size_t w = writes_at_pod; w < host.writes().size(); ++w) {
      EXPECT_THAT(host.writes()[w], testing::Not(HasSubstr("0000:40:00.3")))
          << "the VF in the pod was touched";
      EXPECT_THAT(host.writes()[w], testing::Not(HasSubstr("0000:40:00.0/sriov_numvfs")))
          << "the VF count of the pod's PF was written";
    }
    sh("ip netns del " + pod);
  }
  EXPECT_EQ(state, clean);
  // However the kills fell (autoprobe left off, VFs left unbound), every probe was one
  // the kernel honours.
  EXPECT_THAT(probes_the_kernel_refuses(host), testing::IsEmpty());

  // Never a VF destroyed, never a GUID changed: each VF's GUID files only ever got one value.
  std::map<std::string, std::set<std::string>> guids;
  for (const auto& w : host.writes()) {
    std::istringstream in(w);
    std::string path;
    std::string value;
    in >> path >> value;
    if (path.ends_with("/sriov_numvfs")) {
      EXPECT_EQ(value, "8") << w;
    }
    if (path.ends_with("/node") || path.ends_with("/port")) {
      guids[path].insert(value);
    }
  }
  for (const auto& [path, values] : guids) {
    EXPECT_EQ(values.size(), 1U) << path;
  }
}
