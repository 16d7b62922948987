// SPDX-License-Identifier: Apache-2.0
// The node's naming turn: one naming at a time, handed on as each ends, taken back from a
// pass that was given up.
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
    ASSERT_TRUE(first.take("0000:18:00.0"));
    EXPECT_FALSE(readable(names.turn_fd()));
    NamingTurn second(names);
    EXPECT_FALSE(second.take("0000:40:00.0"));
    EXPECT_FALSE(names.turn_free());
  }
  EXPECT_TRUE(names.turn_free());
  EXPECT_TRUE(readable(names.turn_fd())) << "those in line are woken";
  NamingTurn next(names);
  EXPECT_TRUE(next.take("0000:40:00.0"));
  EXPECT_FALSE(readable(names.turn_fd())) << "taken: the wake is spent";
}

// A pass given up (its runner held in the kernel) may hold the turn in a task that never
// goes on: the turn is taken back, and that task's end later ends nobody else's turn.
TEST(TheNamingTurn, IsTakenBackFromAPassGivenUpAndItsLateEndEndsNoOtherTurn) {
  NameRegistry names;
  auto stale = std::make_unique<NamingTurn>(names);
  ASSERT_TRUE(stale->take("0000:18:00.0"));
  names.revoke("0000:40:00.0");  // not the holder: nothing
  EXPECT_FALSE(names.turn_free());
  names.revoke("0000:18:00.0");
  EXPECT_TRUE(names.turn_free());
  NamingTurn now(names);
  ASSERT_TRUE(now.take("0000:40:00.0"));
  stale.reset();  // the given-up task goes at last
  EXPECT_FALSE(names.turn_free()) << "the later turn is still held";
}
