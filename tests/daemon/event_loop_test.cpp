// SPDX-License-Identifier: Apache-2.0
#include "event_loop.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <vector>

namespace vfready::daemon {
namespace {

using namespace std::chrono_literals;

TEST(EventLoop, TimersFireInDeadlineOrderOnceEach) {
  EventLoop loop;
  std::vector<int> fired;
  const auto now = Clock::now();
  loop.add_timer(now + 20ms, [&] { fired.push_back(2); });
  loop.add_timer(now + 5ms, [&] { fired.push_back(1); });
  loop.add_timer(now + 40ms, [&] {
    fired.push_back(3);
    loop.quit(7);
  });
  EXPECT_EQ(loop.run(), 7);
  EXPECT_EQ(fired, (std::vector<int>{1, 2, 3}));
}

TEST(EventLoop, AReadyFdIsDispatchedAndARemovedSourceIsNot) {
  EventLoop loop;
  const int a = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  const int b = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  int a_calls = 0;
  int b_calls = 0;
  EventLoop::Id b_id = 0;
  loop.add_fd(a, POLLIN, [&](short revents) {
    EXPECT_TRUE((revents & POLLIN) != 0);
    uint64_t v = 0;
    static_cast<void>(read(a, &v, sizeof v));
    ++a_calls;
    loop.remove(b_id);  // b is ready in the same round: it must not run
    loop.quit(0);
  });
  b_id = loop.add_fd(b, POLLIN, [&](short) { ++b_calls; });
  const uint64_t one = 1;
  ASSERT_EQ(write(a, &one, sizeof one), 8);
  ASSERT_EQ(write(b, &one, sizeof one), 8);
  // a was added first and runs first in a round.
  loop.run();
  EXPECT_EQ(a_calls, 1);
  EXPECT_EQ(b_calls, 0);
  close(a);
  close(b);
}

TEST(EventLoop, WakesOnlyForItsSources) {
  EventLoop loop;
  loop.add_timer(Clock::now() + 30ms, [&] { loop.quit(0); });
  loop.run();
  // One wake-up for the timer (poll may return once early on rounding, never more).
  EXPECT_LE(loop.turns(), 2U);
}

}  // namespace
}  // namespace vfready::daemon
