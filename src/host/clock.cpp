// SPDX-License-Identifier: Apache-2.0
#include "vfready/host/clock.hpp"

#include <atomic>

namespace vfready::host {
namespace {

// Set by tests on the loop's thread, read by every thread (the planner's bounds too).
std::atomic<Clock::rep> skipped_ticks{0};

}  // namespace

Clock::time_point Clock::now() noexcept { return from_monotonic(std::chrono::steady_clock::now()); }

void Clock::skip(duration by) noexcept {
  skipped_ticks.fetch_add(by.count(), std::memory_order_relaxed);
}

Clock::duration Clock::skipped() noexcept {
  return duration(skipped_ticks.load(std::memory_order_relaxed));
}

std::chrono::steady_clock::time_point Clock::to_monotonic(time_point t) noexcept {
  if (t == time_point::max() || t == time_point::min()) {
    return std::chrono::steady_clock::time_point(t.time_since_epoch());  // no time: as is
  }
  return std::chrono::steady_clock::time_point(t.time_since_epoch() - skipped());
}

Clock::time_point Clock::from_monotonic(std::chrono::steady_clock::time_point t) noexcept {
  if (t == std::chrono::steady_clock::time_point::max() ||
      t == std::chrono::steady_clock::time_point::min()) {
    return time_point(t.time_since_epoch());
  }
  return time_point(t.time_since_epoch() + skipped());
}

}  // namespace vfready::host
