// SPDX-License-Identifier: Apache-2.0
// The netlink VF GUID request cannot run where no IPoIB netdev exists (veth and ifb
// answer EOPNOTSUPP), so its bytes are read the way the kernel reads them: do_setlink()
// walks IFLA_VFINFO_LIST and hands each IFLA_VF_INFO to do_setvfinfo(), which sets the
// node GUID when the entry has one and returns, and the port GUID only otherwise
// (net/core/rtnetlink.c).
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include "vfready/host/links.hpp"

using vfready::host::build_vf_guids_request;
using vfready::model::Guid;

namespace {

struct Attr {
  int type;
  const uint8_t* data;
  std::size_t len;
};

// The attributes of one level, in order (a type may repeat, as IFLA_VF_INFO does).
std::vector<Attr> attributes(const uint8_t* data, std::size_t len) {
  std::vector<Attr> out;
  std::size_t off = 0;
  while (off + sizeof(nlattr) <= len) {
    nlattr a{};
    std::memcpy(&a, data + off, sizeof a);
    if (a.nla_len < sizeof(nlattr) || off + a.nla_len > len) {
      break;
    }
    out.push_back({a.nla_type & NLA_TYPE_MASK, data + off + NLA_HDRLEN,
                   static_cast<std::size_t>(a.nla_len) - NLA_HDRLEN});
    off += NLA_ALIGN(a.nla_len);
  }
  return out;
}

// What the kernel would set for each VF: node and port GUID.
struct Applied {
  std::optional<uint64_t> node;
  std::optional<uint64_t> port;
};

std::optional<ifla_vf_guid> guid_of(const std::vector<Attr>& info, int type) {
  for (const auto& a : info) {
    if (a.type == type && a.len == sizeof(ifla_vf_guid)) {
      ifla_vf_guid g{};
      std::memcpy(&g, a.data, sizeof g);
      return g;
    }
  }
  return std::nullopt;
}

// As do_setlink() and do_setvfinfo() take the request: per IFLA_VF_INFO, the node GUID
// if there is one (and then nothing else of the entry), else the port GUID.
std::map<uint32_t, Applied> as_the_kernel_applies(const std::vector<uint8_t>& bytes) {
  std::map<uint32_t, Applied> out;
  const std::size_t attrs_at = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifinfomsg));
  for (const auto& top : attributes(bytes.data() + attrs_at, bytes.size() - attrs_at)) {
    if (top.type != IFLA_VFINFO_LIST) {
      continue;
    }
    for (const auto& entry : attributes(top.data, top.len)) {
      EXPECT_EQ(entry.type, IFLA_VF_INFO) << "do_setlink() refuses other attributes (EINVAL)";
      const auto info = attributes(entry.data, entry.len);
      if (auto node = guid_of(info, IFLA_VF_IB_NODE_GUID)) {
        out[node->vf].node = node->guid;
        continue;  // do_setvfinfo() returns here
      }
      if (auto port = guid_of(info, IFLA_VF_IB_PORT_GUID)) {
        out[port->vf].port = port->guid;
      }
    }
  }
  return out;
}

}  // namespace

TEST(TheVfGuidRequest, IsAnAckedSetlinkOnThePf) {
  const auto bytes =
      build_vf_guids_request(7, 3, Guid{0x0600112233445503ULL}, Guid{0x0600112233445504ULL});
  ASSERT_GE(bytes.size(), NLMSG_HDRLEN + sizeof(ifinfomsg));
  nlmsghdr h{};
  std::memcpy(&h, bytes.data(), sizeof h);
  EXPECT_EQ(h.nlmsg_type, RTM_SETLINK);
  EXPECT_EQ(h.nlmsg_len, bytes.size());
  EXPECT_NE(h.nlmsg_flags & NLM_F_REQUEST, 0);
  EXPECT_NE(h.nlmsg_flags & NLM_F_ACK, 0);
  ifinfomsg ifi{};
  std::memcpy(&ifi, bytes.data() + NLMSG_HDRLEN, sizeof ifi);
  EXPECT_EQ(ifi.ifi_index, 7);
}

TEST(TheVfGuidRequest, SetsBothGuidsOfTheVfAsTheKernelWalksIt) {
  for (uint32_t vf : {0u, 3u, 126u}) {
    const uint64_t node = 0x0600112233445500ULL + vf;
    const uint64_t port = 0x0700112233445500ULL + vf;
    const auto applied =
        as_the_kernel_applies(build_vf_guids_request(7, vf, Guid{node}, Guid{port}));
    ASSERT_EQ(applied.size(), 1u) << "VF " << vf;
    ASSERT_TRUE(applied.contains(vf)) << "VF " << vf;
    EXPECT_EQ(applied.at(vf).node, node) << "VF " << vf;
    EXPECT_EQ(applied.at(vf).port, port) << "VF " << vf << ": the port GUID would be ignored";
  }
}
