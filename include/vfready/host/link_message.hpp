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
  Link link;             // ifindex, name, altnames, MTU, IFF_UP
};

// `message`: one netlink message, its header first. nullopt when it is not a link
// message, or is cut short.
std::optional<LinkMessage> parse_link_message(std::span<const uint8_t> message);

}  // namespace vfready::host
