// SPDX-License-Identifier: Apache-2.0
// The fake host counts the FUSE requests it serves, so a benchmark can say what a
// bring-up costs in round trips, and a change to the fake host can show what it saved.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>

#include "fake_host.hpp"
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
