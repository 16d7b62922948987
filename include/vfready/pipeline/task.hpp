// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <coroutine>
#include <cstddef>
#include <exception>
#include <optional>
#include <utility>
#include <vector>

#include "vfready/host/clock.hpp"

// A PF's pass as a sequence of steps that may wait, written as it reads (a coroutine):
// where a step waits, the pass `co_await`s what it waits on (a Wait: descriptors that
// turn readable, a time) and whoever drives it (drive() below, or the daemon's loop for
// many passes) resumes it once that has come. Nothing here waits itself: the driver does, for
// every pass it drives at once.
namespace vfready::pipeline {

// What a suspended pass waits on: any of `fds` readable, or `until`, whichever first.
struct Wait {
  using Clock = host::Clock;
  std::vector<int> fds;
  Clock::time_point until = Clock::time_point::max();

  // Until `t`; on `fd` readable (none when fd < 0) or until `t`. (Build a Wait with these
  // or as a named value: GCC 12 rejects a braced list inside a co_await's operand.)
  static Wait time(Clock::time_point t) { return {{}, t}; }
  static Wait fd_or_time(int fd, Clock::time_point t) {
    Wait w{{}, t};
    if (fd >= 0) {
      w.fds.push_back(fd);
    }
    return w;
  }
};

// Where a chain of tasks (a pass and the steps it awaits) left what it waits on, and
// what to resume when that has come. One per driven pass.
struct TaskSlot {
  Wait wait;
  std::coroutine_handle<> resume;
};

namespace detail {

// A coroutine's frame, from the calling thread's frames that were freed (by size, a few
// dozen of each kept), else from the heap: a VF's steps make some ten frames, each a
// malloc and a free otherwise. Under AddressSanitizer, always the heap (frame_pool.cpp).
void* allocate_frame(std::size_t size);
void free_frame(void* frame, std::size_t size) noexcept;
// Whether freed frames are kept for reuse (false under AddressSanitizer).
bool frames_pooled();

struct PromiseBase {
  static void* operator new(std::size_t size) { return allocate_frame(size); }
  static void operator delete(void* frame, std::size_t size) noexcept { free_frame(frame, size); }

  TaskSlot* slot = nullptr;              // the driven chain's, handed down at each co_await
  std::coroutine_handle<> continuation;  // the task that awaits this one
  std::exception_ptr error;

  std::suspend_always initial_suspend() noexcept { return {}; }
  struct FinalAwaiter {
    bool await_ready() noexcept { return false; }
    template <class P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
      auto next = h.promise().continuation;
      return next ? next : std::noop_coroutine();
    }
    void await_resume() noexcept {}
  };
  FinalAwaiter final_suspend() noexcept { return {}; }
  void unhandled_exception() { error = std::current_exception(); }

  // co_await Wait{...}: suspends the whole chain until the driver resumes it.
  struct WaitAwaiter {
    Wait owned;                   // a Wait given as a value
    const Wait* given = nullptr;  // or the awaiting task's own, which outlives the wait
    bool await_ready() const noexcept { return false; }
    template <class P>
    void await_suspend(std::coroutine_handle<P> h) {
      // Copied into the slot's Wait, whose list of fds keeps its room from turn to turn.
      const Wait& wait = given != nullptr ? *given : owned;
      auto& slot = *h.promise().slot;
      slot.wait.fds.assign(wait.fds.begin(), wait.fds.end());
      slot.wait.until = wait.until;
      slot.resume = h;
    }
    void await_resume() const noexcept {}
  };
  WaitAwaiter await_transform(Wait&& wait) { return {std::move(wait), nullptr}; }
  WaitAwaiter await_transform(const Wait& wait) { return {{}, &wait}; }
  // A task awaited from another: its own awaiter (a reference to it, never a copy).
  template <class A>
  auto await_transform(A& task) noexcept {
    return typename A::Awaiter{task};
  }
};

}  // namespace detail

template <class T>
class [[nodiscard]] Task {
 public:
  struct promise_type : detail::PromiseBase {
    std::optional<T> value;
    Task get_return_object() {
      return Task(std::coroutine_handle<promise_type>::from_promise(*this));
    }
    template <class U>
    void return_value(U&& v) {
      value.emplace(std::forward<U>(v));
    }
  };

  Task(Task&& other) noexcept : h_(std::exchange(other.h_, {})) {}
  Task& operator=(Task&& other) noexcept {
    if (this != &other) {
      destroy();
      h_ = std::exchange(other.h_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { destroy(); }

  // co_await of a task from another (`auto t = step(...); co_await t;`: GCC 12 destroys
  // a temporary argument twice when the call is inside the co_await): it runs at once,
  // in the awaiting task's chain.
  struct Awaiter {
    Task& task;
    bool await_ready() const noexcept { return false; }
    template <class P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> awaiting) noexcept {
      task.h_.promise().slot = awaiting.promise().slot;
      task.h_.promise().continuation = awaiting;
      return task.h_;
    }
    T await_resume() { return task.take(); }
  };

  // For a driver: runs the task until it first waits (or ends), its waits left in `slot`.
  void start(TaskSlot& slot) {
    h_.promise().slot = &slot;
    h_.resume();
  }
  [[nodiscard]] bool done() const { return h_.done(); }
  // Its value, once done(); rethrows what it threw.
  T take() {
    if (h_.promise().error) {
      std::rethrow_exception(h_.promise().error);
    }
    return std::move(*h_.promise().value);
  }

 private:
  explicit Task(std::coroutine_handle<promise_type> h) : h_(h) {}
  void destroy() {
    if (h_) {
      h_.destroy();
    }
  }
  std::coroutine_handle<promise_type> h_;
};

// A task without a value.
struct Done {};

// poll()'s timeout for a wait until `until`: -1 for none (time_point::max()), else the
// milliseconds left, rounded up, at most a minute (a wait past it is made again).
int poll_timeout(Wait::Clock::time_point until);
// Waits (poll) until one of `wait.fds` is readable or `wait.until`.
void wait_for(const Wait& wait);
// Whether `fd` is readable now (never waits).
bool readable(int fd);
// Whether what `wait` waits on has come by `now`: its time, or one of its fds readable.
bool came(const Wait& wait, Wait::Clock::time_point now);

// Drives `task` to its end on this thread, waiting as it asks; its value.
template <class T>
T drive(Task<T> task) {
  TaskSlot slot;
  task.start(slot);
  while (!task.done()) {
    wait_for(slot.wait);
    auto next = std::exchange(slot.resume, {});
    next.resume();
  }
  return task.take();
}

}  // namespace vfready::pipeline
