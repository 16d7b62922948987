// SPDX-License-Identifier: Apache-2.0
// The fake host leaves nothing behind: not on SIGTERM, not when it or its test dies.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_host.hpp"
#include "process.hpp"
#include "root_only.hpp"

using namespace vfready::testing;
using testing::HasSubstr;

namespace {

bool netns_exists(const std::string& name) { return exists("/run/netns/" + name); }

void expect_nothing_left(const std::string& root, const std::string& netns, pid_t pid) {
  EXPECT_FALSE(is_mounted(root + "/sys")) << root;
  EXPECT_FALSE(netns_exists(netns)) << netns;
  EXPECT_NE(sh("ip netns list").out.find(netns + " "), 0u);
  EXPECT_TRUE(wait_for_exit(pid, 1s));
}

}  // namespace

TEST(AFakeHostLifecycle, PrintsReadyAndTearsEverythingDownOnSigterm) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  EXPECT_TRUE(is_mounted(host.root() + "/sys"));
  EXPECT_TRUE(netns_exists(host.netns()));
  ASSERT_EQ(sh("echo 4 > " + host.pci("0000:18:00.0", "sriov_numvfs")).exit_code, 0);
  const pid_t pid = host.pid();
  EXPECT_EQ(host.stop(), 0);
  expect_nothing_left(host.root(), host.netns(), pid);
  EXPECT_TRUE(exists(host.root() + "/writes.log")) << "the records stay for the test to read";
}

TEST(AFakeHostLifecycle, ReclaimsTheRootAndNamespaceOfAFakeHostThatWasKilled) {
  VFREADY_REQUIRE_ROOT();
  auto topo = TopologyBuilder::reference();
  FakeHost first(topo);
  const auto topology_file = first.root() + "/topology.json";
  first.kill_hard();
  // SIGKILL left a dead mount and a pinned namespace.
  EXPECT_TRUE(netns_exists(first.netns()));
  FakeHost second(topology_file, first.root(), first.netns());
  EXPECT_EQ(read_file(second.pci("0000:18:00.0", "sriov_totalvfs")), "16\n");
  const pid_t pid = second.pid();
  EXPECT_EQ(second.stop(), 0);
  expect_nothing_left(first.root(), first.netns(), pid);
}

TEST(AFakeHostLifecycle, GoesAwayWhenTheTestThatStartedItCrashes) {
  VFREADY_REQUIRE_ROOT();
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  const pid_t test = fork();
  if (test == 0) {
    close(report[0]);
    // A test process that starts a fake host and then crashes.
    FakeHost host(TopologyBuilder::reference());
    const auto line = host.root() + " " + host.netns() + " " + std::to_string(host.pid()) + "\n";
    if (write(report[1], line.data(), line.size()) < 0) {
      _exit(1);
    }
    abort();
  }
  close(report[1]);
  std::string line;
  char buf[512];
  ssize_t n = 0;
  while ((n = read(report[0], buf, sizeof buf)) > 0) {
    line.append(buf, static_cast<size_t>(n));
  }
  close(report[0]);
  int status = 0;
  ASSERT_EQ(waitpid(test, &status, 0), test);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the test process crashed";
  std::istringstream fields(line);
  std::string root;
  std::string netns;
  pid_t pid = 0;
  ASSERT_TRUE(fields >> root >> netns >> pid) << line;
  EXPECT_TRUE(wait_for_exit(pid, 10s));
  expect_nothing_left(root, netns, pid);
  sh("rm -rf '" + root + "' '" + root + ".stderr'");
}

TEST(AFakeHostLifecycle, RefusesABadTopologyNamingTheFileAndKeyAndMakesNothing) {
  VFREADY_REQUIRE_ROOT();
  auto topo = TopologyBuilder::reference();
  topo.function("0000:18:00.0")["faults"] = {{"numvfs_errno", "EWHATEVER"}};
  char dir[] = "/tmp/vfready-badtopo-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const auto file = topo.write(dir);
  const std::string netns = "vftbad" + std::to_string(getpid());
  auto r = sh(std::string(VFREADY_FAKEHOST_PATH) + " --topology " + file + " --root " + dir +
              "/root --netns " + netns);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(file + ": $.functions[0].faults.numvfs_errno: unknown errno"));
  EXPECT_THAT(r.err, HasSubstr("EIO"));
  EXPECT_TRUE(r.out.empty());
  EXPECT_FALSE(netns_exists(netns));
  EXPECT_FALSE(exists(std::string(dir) + "/root"));
  sh(std::string("rm -rf ") + dir);
}

TEST(AFakeHostLifecycle, RefusesANamespaceThatIsNotItsOwn) {
  VFREADY_REQUIRE_ROOT();
  const std::string netns = "vftforeign" + std::to_string(getpid());
  ASSERT_EQ(sh("ip netns add " + netns).exit_code, 0);
  char dir[] = "/tmp/vfready-foreign-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  auto r = sh(std::string(VFREADY_FAKEHOST_PATH) + " --topology " + reference_topology_path() +
              " --root " + dir + " --netns " + netns);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("network namespace " + netns + " exists"));
  EXPECT_TRUE(netns_exists(netns)) << "someone else's namespace is left alone";
  EXPECT_FALSE(is_mounted(std::string(dir) + "/sys"));
  sh("ip netns del " + netns + "; rm -rf " + dir);
}
