// SPDX-License-Identifier: Apache-2.0
// The helper's rtnetlink requests (DeviceOp::Kind::kNetlink). Like the rest of the
// helper, system calls only: no allocation, no locks.
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "device_call_helper.hpp"

namespace vfready::host::helper {

namespace {

// --- rtnetlink, on a socket the helper opens at its first request and keeps.
int g_netlink = -1;
uint32_t g_seq = 0;
alignas(nlmsghdr) char g_netlink_request[std::size_t{4096}];
alignas(nlmsghdr) char g_netlink_answer[std::size_t{64} * 1024];

// The link of an RTM_NEWLINK answer as the daemon reads it (link_message.hpp): its
// headers, then its name, MTU, address and altnames; its stats and the rest are left out, so
// that it fits `room` (a page). 0, or EMSGSIZE when those do not fit.
int32_t keep_link(const nlmsghdr* h, char* out, uint32_t room, uint32_t* len) {
  constexpr uint32_t kHeaders = NLMSG_LENGTH(sizeof(ifinfomsg));
  if (h->nlmsg_len < kHeaders) {
    return EPROTO;
  }
  std::memcpy(out, h, kHeaders);
  uint32_t at = kHeaders;
  const char* attrs = reinterpret_cast<const char*>(h) + kHeaders;  // NOLINT: the kernel's layout
  auto left = static_cast<int>(h->nlmsg_len - kHeaders);
  for (auto* rta = reinterpret_cast<const rtattr*>(attrs); RTA_OK(rta, left);  // NOLINT
       rta = RTA_NEXT(rta, left)) {                                            // NOLINT
    const auto type = static_cast<uint16_t>(rta->rta_type & NLA_TYPE_MASK);
    if (type != IFLA_IFNAME && type != IFLA_MTU && type != IFLA_PROP_LIST && type != IFLA_ADDRESS) {
      continue;
    }
    if (RTA_ALIGN(rta->rta_len) > room - at) {
      return EMSGSIZE;
    }
    std::memcpy(out + at, rta, rta->rta_len);
    at += RTA_ALIGN(rta->rta_len);
  }
  // `out` need not be aligned for a header: its length is copied in.
  std::memcpy(out + offsetof(nlmsghdr, nlmsg_len), &at, sizeof at);
  *len = at;
  return 0;
}

}  // namespace

int32_t netlink_request(const char* request, uint32_t size, char* out, uint32_t room,
                        uint32_t* len) {
  if (size < sizeof(nlmsghdr) || size > sizeof g_netlink_request) {
    return EINVAL;
  }
  if (g_netlink < 0) {
    g_netlink = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (g_netlink < 0) {
      return errno;
    }
  }
  std::memcpy(g_netlink_request, request, size);
  auto* h = reinterpret_cast<nlmsghdr*>(g_netlink_request);  // NOLINT: the kernel's layout
  h->nlmsg_len = size;
  h->nlmsg_seq = ++g_seq;
  h->nlmsg_pid = 0;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  ssize_t n = 0;
  do {
    n = ::sendto(g_netlink, g_netlink_request, size, 0, reinterpret_cast<const sockaddr*>(&kernel),
                 sizeof kernel);  // NOLINT
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    return errno;
  }
  while (true) {
    do {
      n = ::recv(g_netlink, g_netlink_answer, sizeof g_netlink_answer, MSG_TRUNC);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
      return errno;
    }
    if (static_cast<std::size_t>(n) > sizeof g_netlink_answer) {
      return EMSGSIZE;  // cut short: what it said cannot be read
    }
    // The messages of the answer, as NLMSG_OK and NLMSG_NEXT walk them (unsigned here).
    const auto size = static_cast<std::size_t>(n);
    for (std::size_t at = 0; at + sizeof(nlmsghdr) <= size;) {
      const auto* a = reinterpret_cast<const nlmsghdr*>(g_netlink_answer + at);  // NOLINT
      if (a->nlmsg_len < sizeof(nlmsghdr) || a->nlmsg_len > size - at) {
        break;
      }
      at += NLMSG_ALIGN(a->nlmsg_len);
      if (a->nlmsg_seq != g_seq) {
        continue;  // an answer to an earlier request (none is left unread)
      }
      if (a->nlmsg_type == NLMSG_ERROR) {
        if (a->nlmsg_len < NLMSG_LENGTH(sizeof(nlmsgerr))) {
          return EPROTO;
        }
        const auto* e = static_cast<const nlmsgerr*>(NLMSG_DATA(a));
        return -e->error;
      }
      if (a->nlmsg_type == RTM_NEWLINK) {
        return keep_link(a, out, room, len);
      }
    }
  }
}

}  // namespace vfready::host::helper
