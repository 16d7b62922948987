// SPDX-License-Identifier: Apache-2.0
#include "vfready/host/link_name.hpp"

#include <net/if.h>

namespace vfready::host {

std::optional<std::string> link_name(int ifindex) {
  char name[IF_NAMESIZE] = {};
  if (ifindex <= 0 || ::if_indextoname(static_cast<unsigned>(ifindex), name) == nullptr) {
    return std::nullopt;
  }
  return std::string(name);
}

}  // namespace vfready::host
