// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/kernel_features.hpp"

#include "vfready/model/version.hpp"

namespace vfready::model {

bool renames_up_links(std::string_view kernel_release) {
  const auto release = Version::parse_prefix(kernel_release);
  if (!release) {
    return true;
  }
  static const auto kLiveRename = Version::parse("6.2").value();
  return release.value() >= kLiveRename;
}

}  // namespace vfready::model
