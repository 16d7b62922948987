// SPDX-License-Identifier: Apache-2.0
// The queue the benchmark's floor hands its renames through, from the thread that probes.
#include "../bench/hand_off.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

using vfready::testing::HandOff;

TEST(HandOff, GivesItemsInOrderThenNothingOnceClosedAndEmpty) {
  HandOff<int> q;
  q.push(1);
  q.push(2);
  q.close();
  EXPECT_EQ(q.pop(), 1);
  EXPECT_EQ(q.pop(), 2);
  EXPECT_EQ(q.pop(), std::nullopt);
  EXPECT_EQ(q.pop(), std::nullopt);
}

TEST(HandOff, PopWaitsForAnotherThreadsPushes) {
  HandOff<int> q;
  std::vector<int> got;
  std::thread consumer([&] {
    while (auto item = q.pop()) {
      got.push_back(*item);
    }
  });
  for (int i = 0; i < 1000; ++i) {
    q.push(i);
  }
  q.close();
  consumer.join();
  ASSERT_EQ(got.size(), 1000U);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(got[static_cast<std::size_t>(i)], i);
  }
}
