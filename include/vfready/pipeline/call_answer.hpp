// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>

#include "vfready/host/sriov_calls.hpp"
#include "vfready/pipeline/task.hpp"

namespace vfready::pipeline {

// Whether a started call's answer is there to take (finish()): it has answered, answers
// at once, or its deadline has passed (finish() then says kStuck). Never waits.
template <class T>
bool answer_due(const host::StartedCall<T>& call, Wait::Clock::time_point now) {
  return call.fd() < 0 || now >= call.until() || readable(call.fd());
}

// The answer of a call started into a driver (host::SriovCalls::start_*), waited for as a
// task: its pass waits on the call's descriptor, up to its deadline, not its thread.
// (`auto a = answer(calls.start_...(...)); co_await a;`: the call made outside the
// co_await, as task.hpp says.)
template <class T>
Task<T> answer(std::unique_ptr<host::StartedCall<T>> call) {
  while (!answer_due(*call, Wait::Clock::now())) {
    co_await Wait::fd_or_time(call->fd(), call->until());
  }
  co_return call->finish();
}

}  // namespace vfready::pipeline
