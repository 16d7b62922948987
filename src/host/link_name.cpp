// SPDX-License-Identifier: Apache-2.0
#include "vfready/host/link_name.hpp"

#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
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

std::optional<uint32_t> link_mtu(const std::string& name) {
  ifreq request{};
  if (name.empty() || name.size() >= sizeof request.ifr_name) {
    return std::nullopt;
  }
  std::memcpy(request.ifr_name, name.data(), name.size());
  // Any socket takes the device ioctls (sock_do_ioctl() hands them to dev_ioctl()).
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return std::nullopt;
  }
  const int rc = ::ioctl(fd, SIOCGIFMTU, &request);
  ::close(fd);
  if (rc != 0 || request.ifr_mtu <= 0) {
    return std::nullopt;
  }
  return static_cast<uint32_t>(request.ifr_mtu);
}

}  // namespace vfready::host
