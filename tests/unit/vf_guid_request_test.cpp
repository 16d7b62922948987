// SPDX-License-Identifier: Apache-2.0
// The netlink VF GUID request cannot run where no IPoIB netdev exists (veth and ifb
// answer EOPNOTSUPP), so its bytes are checked attribute by attribute.
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

#include "vfready/host/links.hpp"

using vfready::host::build_vf_guids_request;
using vfready::model::Guid;

namespace {

// Attributes of one level, by type, as (pointer, payload length).
std::map<int, std::pair<const uint8_t*, std::size_t>> attributes(const uint8_t* data,
                                                                 std::size_t len) {
  std::map<int, std::pair<const uint8_t*, std::size_t>> out;
  std::size_t off = 0;
  while (off + sizeof(nlattr) <= len) {
    nlattr a{};
    std::memcpy(&a, data + off, sizeof a);
    if (a.nla_len < sizeof(nlattr) || off + a.nla_len > len) {
      break;
    }
    out[a.nla_type & NLA_TYPE_MASK] = {data + off + NLA_HDRLEN, a.nla_len - NLA_HDRLEN};
    off += NLA_ALIGN(a.nla_len);
  }
  return out;
}

}  // namespace

TEST(TheVfGuidRequest, IsAnAckedSetlinkOnThePfWithNodeAndPortGuidsOfTheVf) {
  const auto bytes =
      build_vf_guids_request(7, 3, Guid{0x0600112233445503ULL}, Guid{0x0600112233445503ULL});
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

  const std::size_t attrs_at = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifinfomsg));
  auto top = attributes(bytes.data() + attrs_at, bytes.size() - attrs_at);
  ASSERT_TRUE(top.contains(IFLA_VFINFO_LIST));
  auto list = attributes(top[IFLA_VFINFO_LIST].first, top[IFLA_VFINFO_LIST].second);
  ASSERT_TRUE(list.contains(IFLA_VF_INFO));
  auto info = attributes(list[IFLA_VF_INFO].first, list[IFLA_VF_INFO].second);
  for (int type : {IFLA_VF_IB_NODE_GUID, IFLA_VF_IB_PORT_GUID}) {
    ASSERT_TRUE(info.contains(type)) << type;
    ASSERT_EQ(info[type].second, sizeof(ifla_vf_guid));
    ifla_vf_guid g{};
    std::memcpy(&g, info[type].first, sizeof g);
    EXPECT_EQ(g.vf, 3u);
    EXPECT_EQ(g.guid, 0x0600112233445503ULL);
  }
}
