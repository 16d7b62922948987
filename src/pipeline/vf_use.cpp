// SPDX-License-Identifier: Apache-2.0
// The one rule for "a VF is in use": every step that could disturb a VF asks it.
#include "vfready/pipeline/steps.hpp"

namespace vfready::pipeline {

std::optional<std::string> in_use(const model::VfInfo& vf) {
  if (vf.driver && *vf.driver != "mlx5_core") {
    return "bound to " + *vf.driver;
  }
  if (vf.driver && !vf.netdev) {
    return "its netdev is in another network namespace";
  }
  return std::nullopt;
}

}  // namespace vfready::pipeline
