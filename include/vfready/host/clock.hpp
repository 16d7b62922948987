// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>

// The daemon's clock: the monotonic clock (CLOCK_MONOTONIC, as sd-event's timers), which
// a test may move forward to reach a bound or a back-off without waiting for it.
// Every deadline of vfreadyd (a pass's, a device call's, a timer of the loop) is a time of
// this clock; the loop turns them into CLOCK_MONOTONIC for sd-event (to_monotonic()).
namespace vfready::host {

struct Clock {
  using duration = std::chrono::steady_clock::duration;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<Clock>;
  static constexpr bool is_steady = true;

  // CLOCK_MONOTONIC plus what tests have skipped.
  static time_point now() noexcept;

  // For tests: every later reading is `by` further on. Call it on the loop's thread, from
  // a callback the loop dispatches (not a source's prepare()): before its next wait the
  // loop sets its timers again, so that a timer whose time the skip has reached fires at
  // once. A skip from another thread is followed only once the loop next wakes. Never
  // called by vfreadyd.
  static void skip(duration by) noexcept;
  // How far tests have skipped, in all.
  static duration skipped() noexcept;
  // `t` as a time of CLOCK_MONOTONIC (a sd-event timer's, a poll's), and back.
  static std::chrono::steady_clock::time_point to_monotonic(time_point t) noexcept;
  static time_point from_monotonic(std::chrono::steady_clock::time_point t) noexcept;
};

}  // namespace vfready::host
