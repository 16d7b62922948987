// SPDX-License-Identifier: Apache-2.0
#include "vfready/pipeline/autoprobe_guard.hpp"

#include "vfready/host/errno_name.hpp"

namespace vfready::pipeline {

int AutoprobeGuard::turn_off() {
  if (off_) {
    return 0;
  }
  const int err = host_.set_autoprobe(pf_, false);
  // Even a failed write may have taken effect: restore() writes 1 either way.
  off_ = true;
  return err;
}

std::optional<model::Problem> AutoprobeGuard::restore() {
  if (!off_) {
    return std::nullopt;
  }
  off_ = false;
  const int err = host_.set_autoprobe(pf_, true);
  if (err == host::kStuck) {
    return std::nullopt;  // the PF is reported stuck, which says more
  }
  if (err != 0) {
    return model::problem(model::EventKind::kAutoprobeFailed,
                          "cannot turn sriov_drivers_autoprobe of PF " + pf_.str() +
                              " back on: " + host::errno_name(err) +
                              "; the kernel probes none of its VFs while it is off",
                          pf_.str());
  }
  return std::nullopt;
}

}  // namespace vfready::pipeline
