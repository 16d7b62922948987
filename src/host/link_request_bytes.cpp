// SPDX-License-Identifier: Apache-2.0
// The link requests a pass makes for each VF (a lookup, a rename with its MTU), laid out
// as libnl lays them out (nlmsg_put() of a header, an ifinfomsg, nla_put_*()), without
// libnl's message: libnl allocates and clears a page for each.
#include <linux/if.h>
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
  Builder(uint16_t type, uint16_t flags, int ifindex) {
    nlmsghdr h{};
    h.nlmsg_type = type;
    h.nlmsg_flags = flags;  // sequence and port 0: the sender's (NL_AUTO_SEQ, NL_AUTO_PORT)
    put(&h, sizeof h);
    ifinfomsg ifi{};
    ifi.ifi_family = AF_UNSPEC;
    ifi.ifi_index = ifindex;
    put(&ifi, sizeof ifi);
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
      b.u32(IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
      // The kernel looks names and altnames up in one table; IFLA_IFNAME takes at most 15
      // bytes, longer altnames go as IFLA_ALT_IFNAME.
      if (!name.empty()) {
        b.string(name.size() < IFNAMSIZ ? IFLA_IFNAME : IFLA_ALT_IFNAME, name);
      }
      return b.take();
    }
    default:
      return std::nullopt;
  }
}

}  // namespace vfready::host
