// SPDX-License-Identifier: Apache-2.0
#include "scheduler.hpp"

namespace vfready::fakehost {

Scheduler::Scheduler() : thread_([this] { run(); }) {}

Scheduler::~Scheduler() { stop(); }

void Scheduler::at(Clock::time_point when, std::function<void()> fn) {
  {
    std::lock_guard lock(mu_);
    queue_.emplace(when, std::move(fn));
  }
  cv_.notify_one();
}

void Scheduler::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    queue_.clear();
  }
  cv_.notify_one();
  if (thread_.joinable()) {
    thread_.join();
  }
}

void Scheduler::run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (queue_.empty()) {
      cv_.wait(lock);
      continue;
    }
    const auto next = queue_.begin()->first;
    if (Clock::now() < next) {
      cv_.wait_until(lock, next);
      continue;
    }
    auto fn = std::move(queue_.begin()->second);
    queue_.erase(queue_.begin());
    lock.unlock();
    fn();
    lock.lock();
  }
}

}  // namespace vfready::fakehost
