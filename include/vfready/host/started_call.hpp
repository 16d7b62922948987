// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <memory>
#include <utility>

#include "vfready/host/clock.hpp"

// A call that may wait in the kernel (into a driver, or on rtnl_lock), started: the
// caller waits for its answer where it waits for everything else.
namespace vfready::host {

// A call under way: fd() turns readable once it has answered; then, or
// at until(), finish() gives the answer (kStuck where it had not answered by until()).
// fd() < 0: the answer is there at once.
template <class T>
class StartedCall {
 public:
  virtual ~StartedCall() = default;
  [[nodiscard]] virtual int fd() const = 0;
  [[nodiscard]] virtual Clock::time_point until() const = 0;
  virtual T finish() = 0;
};

// A call made before it was handed out: its answer is there.
template <class T>
class AnsweredCall final : public StartedCall<T> {
 public:
  explicit AnsweredCall(T answer) : answer_(std::move(answer)) {}
  [[nodiscard]] int fd() const override { return -1; }
  [[nodiscard]] Clock::time_point until() const override { return {}; }
  T finish() override { return answer_; }  // kept: a second finish() has it too

 private:
  T answer_;
};

template <class T>
std::unique_ptr<StartedCall<T>> answered(T answer) {
  return std::make_unique<AnsweredCall<T>>(std::move(answer));
}

}  // namespace vfready::host
