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

int AutoprobeGuard::turn_off() {
  if (off_) {
    return 0;
  }
  // Even a failed write may have taken effect: restore() writes 1 either way.
  off_ = true;
  return host_.set_autoprobe(pf_, false);
}

std::optional<model::Problem> AutoprobeGuard::restore() {
  if (!off_) {
    return std::nullopt;
  }
  off_ = false;
  return restore_problem(pf_, host_.set_autoprobe(pf_, true));
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
  auto written = answer(host_.start_set_autoprobe(pf_, true));
  const int err = co_await written;
  off_ = false;  // after the answer: a pass ended meanwhile restores it as the guard goes
  co_return restore_problem(pf_, err);
}

}  // namespace vfready::pipeline
