// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace vfready::testing {

// Items handed from one thread to another, in order; pop() waits for the next one. The
// benchmark's floor (a script's shape: probe, then rename on a thread beside it) uses it.
template <class T>
class HandOff {
 public:
  void push(T item) {
    {
      std::lock_guard lock(mu_);
      queue_.push_back(std::move(item));
    }
    cv_.notify_one();
  }
  // No more items: pop() answers nullopt once the queue is empty.
  void close() {
    {
      std::lock_guard lock(mu_);
      closed_ = true;
    }
    cv_.notify_one();
  }
  std::optional<T> pop() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return !queue_.empty() || closed_; });
    if (queue_.empty()) {
      return std::nullopt;
    }
    auto item = std::move(queue_.front());
    queue_.pop_front();
    return item;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<T> queue_;
  bool closed_ = false;
};

}  // namespace vfready::testing
