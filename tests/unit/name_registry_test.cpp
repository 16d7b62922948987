// SPDX-License-Identifier: Apache-2.0
// The node's naming turn: one naming at a time, handed on as each ends.
#include <gtest/gtest.h>
#include <poll.h>

#include "vfready/pipeline/name_registry.hpp"

using vfready::pipeline::NameRegistry;
using vfready::pipeline::NamingTurn;

namespace {

bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1;
}

}  // namespace

TEST(TheNamingTurn, IsOnesAtATimeAndWakesThoseInLineAsItEnds) {
  NameRegistry names;
  ASSERT_GE(names.turn_fd(), 0);
  {
    NamingTurn first(names);
    ASSERT_TRUE(first.take());
    EXPECT_FALSE(readable(names.turn_fd()));
    NamingTurn second(names);
    EXPECT_FALSE(second.take());
    EXPECT_FALSE(names.turn_free());
  }
  EXPECT_TRUE(names.turn_free());
  EXPECT_TRUE(readable(names.turn_fd())) << "those in line are woken";
  NamingTurn next(names);
  EXPECT_TRUE(next.take());
  EXPECT_FALSE(readable(names.turn_fd())) << "taken: the wake is spent";
}
