// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "vfready/host/links.hpp"

// The one parser of RTM_NEWLINK and RTM_DELLINK messages, for the answers to requests
// and for link events alike. Pure: bytes in, a Link out; it trusts nothing of the
// message (lengths are checked against the bytes given).
namespace vfready::host {

struct LinkMessage {
  bool removed = false;  // RTM_DELLINK
  // ifi_family: AF_UNSPEC for the link's own messages; AF_BRIDGE for a bridge port's
  // (br_ifinfo_notify()), which carry no IFLA_PROP_LIST whatever its altnames.
  uint8_t family = 0;
  Link link;  // ifindex, name, altnames, MTU, IFF_UP
};

// What of a link is wanted: all of Link, or its name and MTU only (a link event: the
// walk ends at them, before the statistics and the rest of a message of 1-3 KiB).
enum class LinkParts : uint8_t { kAll, kNameAndMtu };

// `message`: one netlink message, its header first. nullopt when it is not a link
// message, or is cut short.
std::optional<LinkMessage> parse_link_message(std::span<const uint8_t> message,
                                              LinkParts parts = LinkParts::kAll);

}  // namespace vfready::host
