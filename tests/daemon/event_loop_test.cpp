// SPDX-License-Identifier: Apache-2.0
#include "event_loop.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

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

TEST(EventLoop, NeverDispatchesASourceRemovedWhileReady) {
  EventLoop loop;
  const int a = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  const int b = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  int a_calls = 0;
  int b_calls = 0;
  EventLoop::Id a_id = 0;
  EventLoop::Id b_id = 0;
  // Both are ready at once; whichever runs first removes the other, which must then
  // never run.
  a_id = loop.add_fd(a, POLLIN, [&](short revents) {
    EXPECT_TRUE((revents & POLLIN) != 0);
    ++a_calls;
    loop.remove(b_id);
    loop.remove(a_id);  // from its own callback too
    loop.add_timer(Clock::now() + 20ms, [&] { loop.quit(0); });
  });
  b_id = loop.add_fd(b, POLLIN, [&](short) {
    ++b_calls;
    loop.remove(a_id);
    loop.remove(b_id);
    loop.add_timer(Clock::now() + 20ms, [&] { loop.quit(0); });
  });
  const uint64_t one = 1;
  ASSERT_EQ(write(a, &one, sizeof one), 8);
  ASSERT_EQ(write(b, &one, sizeof one), 8);
  EXPECT_EQ(loop.run(), 0);
  EXPECT_EQ(a_calls + b_calls, 1);
  close(a);
  close(b);
}

TEST(EventLoop, AnExceptionInACallbackEndsRunWithIt) {
  EventLoop loop;
  loop.add_timer(Clock::now(), [] { throw std::runtime_error("from a timer"); });
  EXPECT_THROW(loop.run(), std::runtime_error);
}

TEST(EventLoop, WithAnErrorHandlerAnExceptionIsHandedOverAndTheLoopGoesOn) {
  EventLoop loop;
  std::vector<std::string> errors;
  loop.on_error([&](const std::exception_ptr& e) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      errors.emplace_back(x.what());
    }
  });
  loop.add_timer(Clock::now(), [] { throw std::runtime_error("from a timer"); });
  loop.add_timer(Clock::now() + std::chrono::milliseconds(1), [&] { loop.quit(7); });
  EXPECT_EQ(loop.run(), 7);
  EXPECT_THAT(errors, ::testing::ElementsAre("from a timer"));
}

TEST(EventLoop, TakesABlockedSignal) {
  EventLoop loop;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &set, nullptr), 0);
  int got = 0;
  loop.add_signal(SIGUSR1, [&] {
    ++got;
    loop.quit(3);
  });
  ASSERT_EQ(kill(getpid(), SIGUSR1), 0);
  EXPECT_EQ(loop.run(), 3);
  EXPECT_EQ(got, 1);
}

// A source that asks, before each wait, for its fd and a deadline (the bus's way).
class Countdown final : public EventSource {
 public:
  Countdown(EventLoop& loop, int fd) : loop_(loop), fd_(fd) {}
  PollSpec prepare() override {
    ++prepared;
    return {fd_, POLLIN, Clock::now() + 5ms};
  }
  void dispatch(short revents) override {
    revents == 0 ? ++timeouts : ++reads;
    if (timeouts == 2) {
      loop_.quit(0);
    }
  }
  int prepared = 0;
  int timeouts = 0;
  int reads = 0;

 private:
  EventLoop& loop_;
  int fd_;
};

TEST(EventLoop, AsksASourceBeforeEachWaitAndDispatchesItsDeadline) {
  EventLoop loop;
  const int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  auto source = std::make_shared<Countdown>(loop, fd);
  loop.add(source);
  EXPECT_EQ(loop.run(), 0);
  EXPECT_EQ(source->timeouts, 2);
  EXPECT_EQ(source->reads, 0);
  EXPECT_GE(source->prepared, 2);
  close(fd);
}

TEST(EventLoop, WakesOnlyForItsSources) {
  EventLoop loop;
  loop.add_timer(Clock::now() + 30ms, [&] { loop.quit(0); });
  loop.run();
  // One wake-up for the timer (poll may return once early on rounding, never more).
  EXPECT_LE(loop.turns(), 2U);
}

// A source with one deadline, fixed when it is made (a pass's bound); `came` runs once
// it has come.
class DueAt final : public EventSource {
 public:
  DueAt(int fd, Clock::time_point at, std::function<void()> came)
      : fd_(fd), at_(at), came_(std::move(came)) {}
  PollSpec prepare() override {
    return {fd_, POLLIN, timeouts == 0 ? std::optional(at_) : std::nullopt};
  }
  void dispatch(short revents) override {
    revents == 0 ? ++timeouts : ++reads;
    came_();
  }
  int timeouts = 0;
  int reads = 0;

 private:
  int fd_;
  Clock::time_point at_;
  std::function<void()> came_;
};

TEST(EventLoop, ATimerAndADeadlineAnHourAwayComeOnceATestSkipsTheClockAnHour) {
  EventLoop loop;
  const int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  const auto before = Clock::now();
  bool fired = false;
  auto source = std::make_shared<DueAt>(fd, before + 1h, [&] {
    if (fired) {
      loop.quit(0);
    }
  });
  loop.add(source);
  loop.add_timer(before + 1h, [&] {
    fired = true;
    if (source->timeouts == 1) {
      loop.quit(0);
    }
  });
  loop.add_timer(before + 1ms, [&] {
    Clock::skip(1h);
    // Were the skip not followed, this would end the run first.
    loop.add_timer(Clock::now() + 10s, [&] { loop.quit(1); });
  });
  EXPECT_EQ(loop.run(), 0);
  EXPECT_TRUE(fired);
  EXPECT_EQ(source->timeouts, 1);
  EXPECT_EQ(source->reads, 0);
  EXPECT_GE(Clock::now() - before, 1h);
  close(fd);
}

}  // namespace
}  // namespace vfready::daemon
