// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "vfready/host/udev_wait.hpp"
#include "vfready/model/problem.hpp"

// What a step answers: done; waiting (on what, how to know when to look again, and the
// problem to report should the step's bound pass first); or failed (the problems).
// Expected conditions of the host are these values, never exceptions. A step never
// records its own problems: whoever runs it does.
namespace vfready::pipeline {

struct StepResult {
  enum class Kind { kDone, kWaiting, kFailed };
  Kind kind = Kind::kDone;
  std::vector<model::Problem> problems;  // failed
  std::string waiting_on;                // waiting
  model::Problem on_timeout;             // waiting: the problem if the bound passes
  int wait_ifindex = 0;                  // waiting for udev to initialize this netdev,
  host::UdevWait::Netdev wait_netdev = host::UdevWait::Netdev::kNew;  // made by this pass?
  std::chrono::milliseconds retry{0};  // or waiting on what sends no event: look again then

  static StepResult done() { return {}; }
  static StepResult failed(model::Problem problem) {
    return failed(std::vector<model::Problem>{std::move(problem)});
  }
  static StepResult failed(std::vector<model::Problem> problems) {
    StepResult r;
    r.kind = Kind::kFailed;
    r.problems = std::move(problems);
    return r;
  }
  static StepResult waiting_for_udev(std::string on, model::Problem on_timeout, int ifindex,
                                     host::UdevWait::Netdev netdev) {
    StepResult r = waiting(std::move(on), std::move(on_timeout), {});
    r.wait_ifindex = ifindex;
    r.wait_netdev = netdev;
    return r;
  }
  static StepResult waiting(std::string on, model::Problem on_timeout,
                            std::chrono::milliseconds retry) {
    StepResult r;
    r.kind = Kind::kWaiting;
    r.waiting_on = std::move(on);
    r.on_timeout = std::move(on_timeout);
    r.retry = retry;
    return r;
  }
  [[nodiscard]] bool is_done() const { return kind == Kind::kDone; }
  [[nodiscard]] bool is_failed() const { return kind == Kind::kFailed; }
  [[nodiscard]] bool is_waiting() const { return kind == Kind::kWaiting; }
};

}  // namespace vfready::pipeline
