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

// Appends attribute `rta` whole to `out` at `*at`: EMSGSIZE when it does not fit `room`.
int32_t copy_attribute(const rtattr* rta, char* out, uint32_t room, uint32_t* at) {
  if (RTA_ALIGN(rta->rta_len) > room - *at) {
    return EMSGSIZE;
  }
  std::memcpy(out + *at, rta, rta->rta_len);
  *at += RTA_ALIGN(rta->rta_len);
  return 0;
}

// Opens a nest of `type` at `*at` (its length set by close_nest): EMSGSIZE, no room.
int32_t open_nest(uint16_t type, char* out, uint32_t room, uint32_t* at, uint32_t* nest) {
  if (sizeof(rtattr) > room - *at) {
    return EMSGSIZE;
  }
  const rtattr header{static_cast<unsigned short>(0), type};
  *nest = *at;
  std::memcpy(out + *at, &header, sizeof header);
  *at += sizeof header;
  return 0;
}

void close_nest(char* out, uint32_t nest, uint32_t at) {
  const auto len = static_cast<unsigned short>(at - nest);
  std::memcpy(out + nest + offsetof(rtattr, rta_len), &len, sizeof len);
}

// A PF's IFLA_VFINFO_LIST with what the daemon reads of each VF (link_message.hpp): its
// MAC, VLAN, spoof checking, link state and trust; rates, broadcast, VLAN lists and GUIDs
// left out (a VF's entry: about 100 bytes instead of 250).
int32_t keep_vfs(const rtattr* list, char* out, uint32_t room, uint32_t* at) {
  uint32_t nest = 0;
  if (int32_t err = open_nest(IFLA_VFINFO_LIST, out, room, at, &nest)) {
    return err;
  }
  auto left = static_cast<int>(RTA_PAYLOAD(list));
  for (auto* info = static_cast<const rtattr*>(RTA_DATA(list)); RTA_OK(info, left);  // NOLINT
       info = RTA_NEXT(info, left)) {                                                // NOLINT
    if ((info->rta_type & NLA_TYPE_MASK) != IFLA_VF_INFO) {
      continue;
    }
    uint32_t entry = 0;
    if (int32_t err = open_nest(IFLA_VF_INFO, out, room, at, &entry)) {
      return err;
    }
    auto inner = static_cast<int>(RTA_PAYLOAD(info));
    for (auto* a = static_cast<const rtattr*>(RTA_DATA(info)); RTA_OK(a, inner);  // NOLINT
         a = RTA_NEXT(a, inner)) {                                                // NOLINT
      const auto type = static_cast<uint16_t>(a->rta_type & NLA_TYPE_MASK);
      if (type == IFLA_VF_MAC || type == IFLA_VF_VLAN || type == IFLA_VF_SPOOFCHK ||
          type == IFLA_VF_LINK_STATE || type == IFLA_VF_TRUST) {
        if (int32_t err = copy_attribute(a, out, room, at)) {
          return err;
        }
      }
    }
    close_nest(out, entry, *at);
  }
  close_nest(out, nest, *at);
  return 0;
}

// The link of an RTM_NEWLINK answer as the daemon reads it (link_message.hpp): its
// headers, then its name, MTU, address, altnames and, when asked for, its VFs; its stats
// and the rest are left out, so that it fits `room`. 0, or EMSGSIZE when those do not fit.
int32_t keep_link(const nlmsghdr* h, char* out, uint32_t room, uint32_t* len) {
  constexpr uint32_t kHeaders = NLMSG_LENGTH(sizeof(ifinfomsg));
  if (h->nlmsg_len < kHeaders || room < kHeaders) {
    return h->nlmsg_len < kHeaders ? EPROTO : EMSGSIZE;
  }
  std::memcpy(out, h, kHeaders);
  uint32_t at = kHeaders;
  const char* attrs = reinterpret_cast<const char*>(h) + kHeaders;  // NOLINT: the kernel's layout
  auto left = static_cast<int>(h->nlmsg_len - kHeaders);
  for (auto* rta = reinterpret_cast<const rtattr*>(attrs); RTA_OK(rta, left);  // NOLINT
       rta = RTA_NEXT(rta, left)) {                                            // NOLINT
    const auto type = static_cast<uint16_t>(rta->rta_type & NLA_TYPE_MASK);
    int32_t err = 0;
    if (type == IFLA_VFINFO_LIST) {
      err = keep_vfs(rta, out, room, &at);
    } else if (type == IFLA_IFNAME || type == IFLA_MTU || type == IFLA_PROP_LIST ||
               type == IFLA_ADDRESS) {
      err = copy_attribute(rta, out, room, &at);
    }
    if (err != 0) {
      return err;
    }
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
