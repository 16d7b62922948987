// SPDX-License-Identifier: Apache-2.0
#include "vfready/pipeline/autoprobe_guard.hpp"

#include "vfready/host/errno_name.hpp"

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

// A pass that did not end through restore() (it threw): as the daemon's end does.
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
  // Nobody is left to hear a failure: a pass that starts later finds autoprobe off,
  // turns it on, and says so.
  static_cast<void>(host_.set_autoprobe(pf_, true));
}

int AutoprobeGuard::turn_off() {
  if (off_) {
    return 0;
  }
  off_ = true;  // even a failed write may have taken effect: restore() writes 1 either way
  return host_.set_autoprobe(pf_, false);
}

std::optional<model::Problem> AutoprobeGuard::restore() {
  if (!off_) {
    return std::nullopt;
  }
  off_ = false;
  if (host_.stuck(pf_)) {
    return std::nullopt;  // left off on purpose (above); the PF is reported stuck
  }
  return restore_problem(pf_, host_.set_autoprobe(pf_, true));
}

}  // namespace vfready::pipeline
