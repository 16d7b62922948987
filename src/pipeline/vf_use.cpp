// SPDX-License-Identifier: Apache-2.0
// The one rule for "a VF is in use": every step that could disturb a VF asks it.
#include "vfready/pipeline/steps.hpp"

namespace vfready::pipeline {

model::VfUse in_use(const model::VfInfo& vf, std::string_view vf_driver) {
  using Why = model::VfUse::Why;
  if (vf.driver && *vf.driver != vf_driver) {
    return {Why::kOtherDriver, *vf.driver};
  }
  if (vf.driver && !vf.netdev) {
    return {Why::kNetdevElsewhere, {}};
  }
  return {};
}

}  // namespace vfready::pipeline
