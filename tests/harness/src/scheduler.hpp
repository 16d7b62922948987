// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

// Runs functions at a later time on one thread of its own (the fake udevd's latency).
namespace vfready::fakehost {

class Scheduler {
 public:
  using Clock = std::chrono::steady_clock;

  Scheduler();
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  void at(Clock::time_point when, std::function<void()> fn);
  void after(std::chrono::milliseconds delay, std::function<void()> fn) {
    at(Clock::now() + delay, std::move(fn));
  }
  // Drops what has not run and joins the thread. Idempotent.
  void stop();

 private:
  void run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::multimap<Clock::time_point, std::function<void()>> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace vfready::fakehost
