// SPDX-License-Identifier: Apache-2.0
// The link requests a pass makes for each VF (a lookup, a rename with its MTU), laid out
// as libnl lays them out (nlmsg_put() of a header, an ifinfomsg, nla_put_*()), without
// libnl's message: libnl allocates and clears a page for each.
#include <arpa/inet.h>
#include <linux/if.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cstring>
#include <string_view>

#include "vfready/host/links.hpp"

namespace vfready::host {

namespace {

class Builder {
 public:
  // `up`: IFF_UP set in ifi_flags and ifi_change (dev_change_flags() of that flag only).
  Builder(uint16_t type, uint16_t flags, int ifindex, bool up = false) {
    nlmsghdr h{};
    h.nlmsg_type = type;
    h.nlmsg_flags = flags;  // sequence and port 0: the sender's (NL_AUTO_SEQ, NL_AUTO_PORT)
    put(&h, sizeof h);
    ifinfomsg ifi{};
    ifi.ifi_family = AF_UNSPEC;
    ifi.ifi_index = ifindex;
    if (up) {
      ifi.ifi_flags = IFF_UP;
      ifi.ifi_change = IFF_UP;
    }
    put(&ifi, sizeof ifi);
  }
  // A nested attribute: begin() before its attributes, end() with what begin() gave.
  std::size_t begin(uint16_t type) {
    const std::size_t at = out_.size();
    rtattr a{};
    a.rta_type = static_cast<unsigned short>(type | NLA_F_NESTED);
    put(&a, sizeof a);
    return at;
  }
  void end(std::size_t at) {
    const auto len = static_cast<unsigned short>(out_.size() - at);
    std::memcpy(out_.data() + at, &len, sizeof len);  // rta_len, the header's first field
  }
  // An attribute: its header, its payload (`nul`: and a NUL after it, as nla_put_string()
  // puts a string), zeros to the next 4 bytes (nla_put()).
  void attribute(uint16_t type, const void* payload, std::size_t size, bool nul = false) {
    rtattr a{};
    a.rta_len = static_cast<unsigned short>(RTA_LENGTH(size + (nul ? 1 : 0)));
    a.rta_type = type;
    put(&a, sizeof a);
    put(payload, size);
    out_.resize(NLMSG_ALIGN(out_.size() + (nul ? 1 : 0)));  // the NUL and the padding: zeros
  }
  void string(uint16_t type, std::string_view s) { attribute(type, s.data(), s.size(), true); }
  void u32(uint16_t type, uint32_t v) { attribute(type, &v, sizeof v); }
  std::vector<uint8_t> take() {
    const auto len = static_cast<uint32_t>(out_.size());
    std::memcpy(out_.data(), &len, sizeof len);  // nlmsg_len, the message's first field
    return std::move(out_);
  }

 private:
  void put(const void* p, std::size_t n) {
    const auto* bytes = static_cast<const uint8_t*>(p);
    out_.insert(out_.end(), bytes, bytes + n);
  }
  std::vector<uint8_t> out_ = [] {
    std::vector<uint8_t> v;
    v.reserve(128);  // a header, an ifinfomsg and two short attributes
    return v;
  }();
};

// One IFLA_VF_INFO in an IFLA_VFINFO_LIST on the PF: the kernel's do_setvfinfo()
// (net/core/rtnetlink.c) takes each of IFLA_VF_MAC, IFLA_VF_VLAN_LIST, IFLA_VF_SPOOFCHK,
// IFLA_VF_LINK_STATE and IFLA_VF_TRUST of one entry in turn, calling the driver's
// ndo_set_vf_*() for it, and stops at the first that fails (EOPNOTSUPP: the driver has no
// such call). Only what is configured is sent.
std::vector<uint8_t> vf_port_bytes(const LinkRequest& request) {
  Builder b(RTM_SETLINK, NLM_F_REQUEST | NLM_F_ACK, request.ifindex);
  const auto list = b.begin(IFLA_VFINFO_LIST);
  const auto info = b.begin(IFLA_VF_INFO);
  const auto& port = request.vf_port;
  if (request.mac) {
    ifla_vf_mac m{};
    m.vf = request.vf;
    std::memcpy(m.mac, request.mac->bytes().data(), request.mac->bytes().size());
    b.attribute(IFLA_VF_MAC, &m, sizeof m);
  }
  if (port.vlan) {
    const auto vlans = b.begin(IFLA_VF_VLAN_LIST);
    ifla_vf_vlan_info v{};
    v.vf = request.vf;
    v.vlan = *port.vlan;
    v.qos = port.qos;
    v.vlan_proto = htons(ETH_P_8021Q);
    b.attribute(IFLA_VF_VLAN_INFO, &v, sizeof v);
    b.end(vlans);
  }
  if (port.spoofchk) {
    const ifla_vf_spoofchk c{request.vf, *port.spoofchk ? 1U : 0U};
    b.attribute(IFLA_VF_SPOOFCHK, &c, sizeof c);
  }
  if (port.link_state) {
    const ifla_vf_link_state l{request.vf, static_cast<uint32_t>(*port.link_state)};
    b.attribute(IFLA_VF_LINK_STATE, &l, sizeof l);
  }
  if (port.trust) {
    const ifla_vf_trust t{request.vf, *port.trust ? 1U : 0U};
    b.attribute(IFLA_VF_TRUST, &t, sizeof t);
  }
  b.end(info);
  b.end(list);
  return b.take();
}

}  // namespace

std::optional<std::vector<uint8_t>> plain_link_request_bytes(const LinkRequest& request) {
  const auto& name = request.name;
  switch (request.kind) {
    case LinkRequest::Kind::kSet: {
      Builder b(RTM_SETLINK, NLM_F_REQUEST | NLM_F_ACK, request.ifindex);
      if (!name.empty()) {
        b.string(IFLA_IFNAME, name);
      }
      if (request.mtu) {
        b.u32(IFLA_MTU, *request.mtu);
      }
      return b.take();
    }
    case LinkRequest::Kind::kGet:
    case LinkRequest::Kind::kByName: {
      Builder b(RTM_GETLINK, NLM_F_REQUEST, request.ifindex);
      b.u32(IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS | (request.vfs ? RTEXT_FILTER_VF : 0U));
      // The kernel looks names and altnames up in one table; IFLA_IFNAME takes at most 15
      // bytes, longer altnames go as IFLA_ALT_IFNAME.
      if (!name.empty()) {
        b.string(name.size() < IFNAMSIZ ? IFLA_IFNAME : IFLA_ALT_IFNAME, name);
      }
      return b.take();
    }
    case LinkRequest::Kind::kSetUp: {
      Builder b(RTM_SETLINK, NLM_F_REQUEST | NLM_F_ACK, request.ifindex, /*up=*/true);
      return b.take();
    }
    case LinkRequest::Kind::kSetVfPort:
      return vf_port_bytes(request);
    default:
      return std::nullopt;
  }
}

}  // namespace vfready::host
