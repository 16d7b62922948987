// SPDX-License-Identifier: Apache-2.0
// The fake host counts the FUSE requests it serves, so a benchmark can say what a
// bring-up costs in round trips, and a change to the fake host can show what it saved.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <fstream>

#include "daemon_run.hpp"
#include "fake_host.hpp"
#include "process.hpp"
#include "root_only.hpp"

using namespace vfready::testing;

TEST(AFakeHostRequestCount, CountsEachOpenAndReadOfAnAttributeOnce) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  const auto path = host.pci("0000:18:00.0", "sriov_totalvfs");
  // The path walk's lookups are cached after the first access: warm them.
  ASSERT_EQ(read_file(path), "16\n");
  const auto before = host.fuse_requests();
  ASSERT_FALSE(before.empty()) << "no answer to SIGUSR2";
  constexpr int kReads = 5;
  for (int i = 0; i < kReads; ++i) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    std::array<char, 64> buf{};
    ASSERT_EQ(read(fd, buf.data(), buf.size()), 3);
    close(fd);
  }
  const auto after = host.fuse_requests();
  EXPECT_EQ(after.at("open") - before.at("open"), kReads);
  EXPECT_EQ(after.at("read") - before.at("read"), kReads);
  EXPECT_EQ(after.at("lookup"), before.at("lookup")) << "names are cached";
  EXPECT_GE(after.at("getattr"), before.at("getattr"));
}

TEST(AFakeHostRequestCount, HasEveryNameOfItsBootTreeLookedUpBeforeItSaysReady) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  const auto before = host.fuse_requests();
  ASSERT_FALSE(before.empty()) << "no answer to SIGUSR2";
  // As kernfs finds names inside the kernel: a first walk through a PF's link, its RDMA
  // device and a port asks the fake host for no name.
  EXPECT_EQ(read_file(host.pci("0000:18:00.0", "infiniband/mlx5_0/ports/1/link_layer")),
            "InfiniBand\n");
  const auto after = host.fuse_requests();
  EXPECT_EQ(after.at("lookup"), before.at("lookup")) << "names were looked up only now";
  EXPECT_EQ(after.at("open") - before.at("open"), 1u);
}

TEST(AFakeHostExec, StampsTheTimeOfItsExecWhenAsked) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  const auto stamp = host.root() + "/exec.stamp";
  // The wrapper's CLOCK_MONOTONIC is steady_clock's (libstdc++ on Linux).
  const auto ns_now = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  const auto before = ns_now();
  const auto r = sh(on_host(host, stamp) + "true");
  const auto after = ns_now();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int64_t at = 0;
  ASSERT_TRUE(std::ifstream(stamp) >> at) << "no stamp in " << stamp;
  EXPECT_GT(at, before);
  EXPECT_LT(at, after);
}

TEST(AFakeHostExec, RunsNothingWhenItCannotWriteTheStamp) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  const auto stamp = host.root() + "/no-such-dir/exec.stamp";
  const auto ran = host.root() + "/ran";
  const auto r = sh(on_host(host, stamp) + "touch " + ran);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, testing::HasSubstr("cannot write the time of the exec to " + stamp));
  EXPECT_FALSE(std::ifstream(ran).good()) << "the command ran";
}
