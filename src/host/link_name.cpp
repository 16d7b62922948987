// SPDX-License-Identifier: Apache-2.0
#include "vfready/host/link_name.hpp"

#include <net/if.h>

#include <cerrno>
#include <system_error>

namespace vfready::host {

std::optional<std::string> link_name(int ifindex) {
  char name[IF_NAMESIZE] = {};
  if (ifindex <= 0) {
    return std::nullopt;
  }
  if (::if_indextoname(static_cast<unsigned>(ifindex), name) == nullptr) {
    if (errno == ENXIO || errno == ENODEV) {
      return std::nullopt;  // no such link
    }
    // Not an answer about the link (no socket to ask on: EMFILE, ENOMEM).
    throw std::system_error(errno, std::generic_category(),
                            "asking the name of ifindex " + std::to_string(ifindex));
  }
  return std::string(name);
}

}  // namespace vfready::host
