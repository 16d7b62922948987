// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>

// The daemon's one loop: poll(2) over its sources. Everything that owns state runs
// here, on one thread; work that can block (sysfs writes) runs on worker threads that
// post back through an eventfd. A source tells, before each poll, which fd it waits on
// and until when; the loop calls it when either comes.
namespace vfready::daemon {

using Clock = std::chrono::steady_clock;

struct PollSpec {
  int fd = -1;  // -1: no fd this round
  short events = 0;
  std::optional<Clock::time_point> deadline;
};

class EventSource {
 public:
  virtual ~EventSource() = default;
  virtual PollSpec prepare() = 0;
  // `revents` is 0 when the deadline came rather than the fd.
  virtual void dispatch(short revents) = 0;
};

class EventLoop {
 public:
  using Id = int;
  Id add(std::shared_ptr<EventSource> source);
  void remove(Id id);
  // A source of a fixed fd, with no deadline.
  Id add_fd(int fd, short events, std::function<void(short)> on_ready);
  // A one-shot timer.
  Id add_timer(Clock::time_point when, std::function<void()> on_time);

  // Runs until quit(); returns its code.
  int run();
  void quit(int code) { quit_ = code; }
  // Counts loop turns: how often the daemon woke up.
  [[nodiscard]] uint64_t turns() const { return turns_; }

 private:
  std::map<Id, std::shared_ptr<EventSource>> sources_;
  Id next_ = 1;
  std::optional<int> quit_;
  uint64_t turns_ = 0;
};

}  // namespace vfready::daemon
