// SPDX-License-Identifier: Apache-2.0
#include "vfready/host/link_message.hpp"

#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <array>
#include <cstring>
#include <string>

namespace vfready::host {

namespace {

// The headers are copied out, never cast in place: the bytes need not be aligned.
template <class T>
T header_at(std::span<const uint8_t> bytes, std::size_t at) {
  T out{};
  std::memcpy(&out, bytes.data() + at, sizeof out);
  return out;
}

// Calls f(type, payload) for each attribute in `bytes`, as RTA_OK and RTA_NEXT walk
// them, until f answers false: a length shorter than the header or past the end ends
// the walk.
template <class F>
void for_each_attribute(std::span<const uint8_t> bytes, F&& f) {
  std::size_t at = 0;
  while (bytes.size() - at >= sizeof(rtattr)) {
    const auto rta = header_at<rtattr>(bytes, at);
    if (rta.rta_len < sizeof(rtattr) || rta.rta_len > bytes.size() - at) {
      return;
    }
    if (!f(static_cast<uint16_t>(rta.rta_type & NLA_TYPE_MASK),
           bytes.subspan(at + RTA_LENGTH(0), rta.rta_len - RTA_LENGTH(0)))) {
      return;
    }
    at += RTA_ALIGN(rta.rta_len);
    if (at > bytes.size()) {
      return;
    }
  }
}

// An attribute's payload as text: up to its NUL, never past its end.
std::string text_of(std::span<const uint8_t> payload) {
  const auto* text = reinterpret_cast<const char*>(payload.data());  // NOLINT: bytes as chars
  return {text, strnlen(text, payload.size())};
}

// One IFLA_VF_INFO: the structs of <linux/if_link.h>, each led by its VF's number. A
// struct cut short is left out; the VF's number is taken from IFLA_VF_MAC, which
// rtnl_fill_vfinfo() always puts first.
std::optional<VfPort> vf_port_of(std::span<const uint8_t> info) {
  VfPort out;
  bool numbered = false;
  const auto setting = [](uint32_t v) {
    return v == UINT32_MAX ? std::nullopt : std::optional(v != 0);
  };
  for_each_attribute(info, [&](uint16_t type, std::span<const uint8_t> p) {
    if (type == IFLA_VF_MAC && p.size() >= sizeof(ifla_vf_mac)) {
      const auto m = header_at<ifla_vf_mac>(p, 0);
      std::array<uint8_t, 6> mac{};
      std::memcpy(mac.data(), m.mac, mac.size());
      out.vf = m.vf;
      out.mac = model::Mac(mac);
      numbered = true;
    } else if (type == IFLA_VF_VLAN && p.size() >= sizeof(ifla_vf_vlan)) {
      const auto v = header_at<ifla_vf_vlan>(p, 0);
      out.vlan = v.vlan;
      out.qos = v.qos;
    } else if (type == IFLA_VF_SPOOFCHK && p.size() >= sizeof(ifla_vf_spoofchk)) {
      out.spoofchk = setting(header_at<ifla_vf_spoofchk>(p, 0).setting);
    } else if (type == IFLA_VF_TRUST && p.size() >= sizeof(ifla_vf_trust)) {
      out.trust = setting(header_at<ifla_vf_trust>(p, 0).setting);
    } else if (type == IFLA_VF_LINK_STATE && p.size() >= sizeof(ifla_vf_link_state)) {
      const auto state = header_at<ifla_vf_link_state>(p, 0).link_state;
      if (state <= IFLA_VF_LINK_STATE_DISABLE) {
        out.link_state = static_cast<model::VfLinkState>(state);
      }
    }
    return true;
  });
  return numbered ? std::optional(out) : std::nullopt;
}

}  // namespace

std::optional<LinkMessage> parse_link_message(std::span<const uint8_t> message, LinkParts parts) {
  if (message.size() < NLMSG_LENGTH(sizeof(ifinfomsg))) {
    return std::nullopt;
  }
  const auto h = header_at<nlmsghdr>(message, 0);
  if ((h.nlmsg_type != RTM_NEWLINK && h.nlmsg_type != RTM_DELLINK) ||
      h.nlmsg_len < NLMSG_LENGTH(sizeof(ifinfomsg)) || h.nlmsg_len > message.size()) {
    return std::nullopt;
  }
  const auto info = header_at<ifinfomsg>(message, NLMSG_LENGTH(0));
  LinkMessage out;
  out.removed = h.nlmsg_type == RTM_DELLINK;
  out.family = info.ifi_family;
  out.link.ifindex = info.ifi_index;
  out.link.up = (info.ifi_flags & IFF_UP) != 0;
  static_assert(NLMSG_SPACE(sizeof(ifinfomsg)) == NLMSG_LENGTH(sizeof(ifinfomsg)));
  constexpr std::size_t kAttributes = NLMSG_SPACE(sizeof(ifinfomsg));
  const auto attributes = message.subspan(kAttributes, h.nlmsg_len - kAttributes);
  // The kernel writes IFLA_IFNAME first and IFLA_MTU a few after it (rtnl_fill_ifinfo()).
  bool named = false;
  bool mtu = false;
  for_each_attribute(attributes, [&](uint16_t type, std::span<const uint8_t> payload) {
    if (type == IFLA_IFNAME && !payload.empty()) {
      out.link.name = text_of(payload);
      named = true;
    } else if (type == IFLA_MTU && payload.size() >= sizeof(uint32_t)) {
      out.link.mtu = header_at<uint32_t>(payload, 0);
      mtu = true;
    } else if (type == IFLA_ADDRESS && payload.size() == 6 && parts == LinkParts::kAll) {
      std::array<uint8_t, 6> mac{};
      std::memcpy(mac.data(), payload.data(), mac.size());
      out.link.mac = model::Mac(mac);
    } else if (type == IFLA_PROP_LIST && parts == LinkParts::kAll) {
      for_each_attribute(payload, [&](uint16_t inner, std::span<const uint8_t> name) {
        if (inner == IFLA_ALT_IFNAME) {
          out.link.altnames.push_back(text_of(name));
        }
        return true;
      });
    } else if (type == IFLA_VFINFO_LIST && parts == LinkParts::kAll) {
      for_each_attribute(payload, [&](uint16_t inner, std::span<const uint8_t> info) {
        if (inner == IFLA_VF_INFO) {
          if (auto vf = vf_port_of(info)) {
            out.link.vfs.push_back(*vf);
          }
        }
        return true;
      });
    }
    return parts == LinkParts::kAll || !named || !mtu;
  });
  return out;
}

}  // namespace vfready::host
