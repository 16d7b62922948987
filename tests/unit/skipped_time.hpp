// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <utility>

#include "vfready/host/clock.hpp"
#include "vfready/pipeline/task.hpp"

// Drives a task as pipeline::drive() does, on skipped time: a wait none of whose fds is
// readable now skips the clock (host::Clock::skip) to its end instead of sleeping there.
// For MemoryHost only, which answers on the calling thread: nothing else would make one
// of the fds readable meanwhile, so the wait would have ended at its time anyway.
namespace vfready::testing {

template <class T>
T drive_on_skipped_time(pipeline::Task<T> task) {
  pipeline::TaskSlot slot;
  task.start(slot);
  while (!task.done()) {
    const auto& wait = slot.wait;
    const bool readable = std::any_of(wait.fds.begin(), wait.fds.end(),
                                      [](int fd) { return pipeline::readable(fd); });
    const auto now = host::Clock::now();
    if (!readable && wait.until != host::Clock::time_point::max() && wait.until > now) {
      host::Clock::skip(wait.until - now);
    } else if (!readable && wait.until == host::Clock::time_point::max()) {
      pipeline::wait_for(wait);  // only an fd ends it
    }
    std::exchange(slot.resume, {}).resume();
  }
  return task.take();
}

}  // namespace vfready::testing
