// SPDX-License-Identifier: Apache-2.0
#include "vfready/pipeline/autoprobe_guard.hpp"

#include "vfready/host/errno_name.hpp"
#include "vfready/pipeline/started_call.hpp"

namespace vfready::pipeline {

namespace {

// What a failed write of 1 says.
std::optional<model::Problem> restore_problem(const model::PciAddress& pf, int err) {
  if (err == host::kStuck || err == 0) {
    return std::nullopt;  // kStuck: the PF is reported stuck, which says more
  }
  return model::problem(model::EventKind::kAutoprobeFailed,
                        "cannot turn sriov_drivers_autoprobe of PF " + pf.str() +
                            " back on: " + host::errno_name(err) +
                            "; the kernel probes none of its VFs while it is off",
                        pf.str());
}

}  // namespace

void AutoprobeGuards::remove(AutoprobeGuard* guard) { std::erase(guards_, guard); }

void AutoprobeGuards::let_go() {
  for (auto* guard : guards_) {
    guard->let_go();
  }
}

// A pass that did not end through restoring() (it threw): as the daemon's end does.
AutoprobeGuard::~AutoprobeGuard() {
  let_go();
  if (guards_ != nullptr) {
    guards_->remove(this);
  }
}

void AutoprobeGuard::let_go() {
  if (!off_) {
    return;
  }
  off_ = false;
  // Written at once (SriovCalls::set_autoprobe). Nobody is left to hear a failure: a pass
  // that starts later finds autoprobe off, turns it on, and says so.
  static_cast<void>(host_.start_set_autoprobe(pf_, true));
}

Task<int> AutoprobeGuard::turning_off() {
  if (off_) {
    co_return 0;
  }
  off_ = true;
  auto written = answer(host_.start_set_autoprobe(pf_, false));
  co_return co_await written;
}

Task<std::optional<model::Problem>> AutoprobeGuard::restoring() {
  if (!off_) {
    co_return std::nullopt;
  }
  if (host_.stuck(pf_)) {
    off_ = false;            // left off on purpose: not turned on as the guard goes
    co_return std::nullopt;  // the PF is reported stuck, which says more
  }
  auto written = answer(host_.start_set_autoprobe(pf_, true));
  const int err = co_await written;
  off_ = false;  // after the answer: a pass ended meanwhile restores it as the guard goes
  co_return restore_problem(pf_, err);
}

}  // namespace vfready::pipeline
