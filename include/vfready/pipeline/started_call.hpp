// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>

#include "vfready/host/sriov_calls.hpp"
#include "vfready/pipeline/task.hpp"

namespace vfready::pipeline {

// The answer of a call started into a driver (host::SriovCalls::start_*), waited for as a
// task: its pass waits on the call's descriptor, up to its deadline, not its thread.
// (`auto a = answer(calls.start_...(...)); co_await a;`: the call made outside the
// co_await, as task.hpp says.)
template <class T>
Task<T> answer(std::unique_ptr<host::StartedCall<T>> call) {
  while (call->fd() >= 0 && Wait::Clock::now() < call->until() && !readable(call->fd())) {
    co_await Wait::fd_or_time(call->fd(), call->until());
  }
  co_return call->finish();
}

}  // namespace vfready::pipeline
