// SPDX-License-Identifier: Apache-2.0
// What a link request is called in the text of a call that gets stuck, and its bytes.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <linux/if.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <cstring>
#include <vector>

#include "vfready/host/links.hpp"

using vfready::host::describe;
using vfready::host::LinkRequest;
using Kind = LinkRequest::Kind;

TEST(ALinkRequest, IsDescribedByWhatItDoesAndToWhichLink) {
  EXPECT_EQ(describe({Kind::kGet, 7}), "a netlink lookup of ifindex 7");
  LinkRequest with_vfs{Kind::kGet, 7};
  with_vfs.vfs = true;
  EXPECT_EQ(describe(with_vfs), "a netlink lookup of ifindex 7 and its VFs");
  EXPECT_EQ(describe({Kind::kByName, 0, "ibs0v3"}), "a netlink lookup of the name ibs0v3");
  EXPECT_EQ(describe({Kind::kSet, 7, "ibs0v3"}), "a netlink change of ifindex 7: name ibs0v3");
  EXPECT_EQ(describe({Kind::kSet, 7, {}, 4092}), "a netlink change of ifindex 7: MTU 4092");
  EXPECT_EQ(describe({Kind::kSet, 7, "ibs0v3", 4092}),
            "a netlink change of ifindex 7: name ibs0v3, MTU 4092");
  EXPECT_EQ(describe({Kind::kAddAltname, 7, "ibp24s0v3"}),
            "a netlink request adding altname ibp24s0v3 to ifindex 7");
  EXPECT_EQ(describe({Kind::kDelAltname, 7, "ibp24s0v3"}),
            "a netlink request taking altname ibp24s0v3 from ifindex 7");
  LinkRequest guids{Kind::kSetVfGuids, 5};
  guids.vf = 3;
  EXPECT_EQ(describe(guids), "a netlink change of VF 3's GUIDs on ifindex 5");
}

// The requests made without libnl's message are the bytes libnl makes, byte for byte.
TEST(ALinkRequest, MadeWithoutLibnlIsWhatLibnlMakes) {
  using vfready::host::libnl_link_request_bytes;
  using vfready::host::plain_link_request_bytes;
  LinkRequest mtu_only{Kind::kSet, 7, {}, 4092};
  LinkRequest both{Kind::kSet, 7, "ibs0v3", 4092};
  LinkRequest odd{Kind::kSet, 70000, "ib", std::nullopt};     // a name of 2: 1 byte padding
  LinkRequest full{Kind::kSet, 9, "abcdefghijklmno", 65520};  // 15 bytes and its NUL
  LinkRequest get{Kind::kGet, 12};
  LinkRequest get_vfs{Kind::kGet, 12};
  get_vfs.vfs = true;  // RTEXT_FILTER_VF in IFLA_EXT_MASK
  LinkRequest by_name{Kind::kByName, 0, "ibp24s0v3"};
  LinkRequest by_altname{Kind::kByName, 0, "enP1p24s0f0v127altname"};  // past IFNAMSIZ
  for (const auto& r : {mtu_only, both, odd, full, get, get_vfs, by_name, by_altname}) {
    const auto plain = plain_link_request_bytes(r);
    ASSERT_TRUE(plain) << describe(r);
    EXPECT_EQ(*plain, libnl_link_request_bytes(r)) << describe(r);
  }
  EXPECT_NE(plain_link_request_bytes(get), plain_link_request_bytes(get_vfs));
  EXPECT_FALSE(plain_link_request_bytes({Kind::kAddAltname, 7, "x"}));
  EXPECT_FALSE(plain_link_request_bytes({Kind::kDelAltname, 7, "x"}));
}

// An Ethernet VF's MAC and settings: one IFLA_VF_INFO in an IFLA_VFINFO_LIST, each
// setting in the struct do_setvfinfo() reads, only those configured.
TEST(ALinkRequest, SetsAVfsMacAndSettingsInOneVfInfoAsTheKernelReadsThem) {
  LinkRequest r{.kind = Kind::kSetVfPort, .ifindex = 5, .vf = 3};
  r.mac = vfready::model::Mac::parse("06:00:00:01:00:03").value();
  r.vf_port.vlan = 10;
  r.vf_port.qos = 3;
  r.vf_port.trust = true;
  const auto bytes = vfready::host::plain_link_request_bytes(r).value();
  nlmsghdr h{};
  std::memcpy(&h, bytes.data(), sizeof h);
  EXPECT_EQ(h.nlmsg_type, RTM_SETLINK);
  EXPECT_EQ(h.nlmsg_len, bytes.size());
  EXPECT_EQ(h.nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
  ifinfomsg ifi{};
  std::memcpy(&ifi, bytes.data() + NLMSG_LENGTH(0), sizeof ifi);
  EXPECT_EQ(ifi.ifi_index, 5);
  // Walk: VFINFO_LIST > VF_INFO > {VF_MAC, VF_VLAN_LIST > VF_VLAN_INFO, VF_TRUST}.
  std::size_t at = NLMSG_SPACE(sizeof(ifinfomsg));
  const auto attr = [&](std::size_t pos) {
    rtattr a{};
    std::memcpy(&a, bytes.data() + pos, sizeof a);
    return a;
  };
  auto list = attr(at);
  EXPECT_EQ(list.rta_type & NLA_TYPE_MASK, IFLA_VFINFO_LIST);
  EXPECT_EQ(at + list.rta_len, bytes.size());
  at += RTA_LENGTH(0);
  auto info = attr(at);
  EXPECT_EQ(info.rta_type & NLA_TYPE_MASK, IFLA_VF_INFO);
  EXPECT_EQ(info.rta_len, list.rta_len - RTA_LENGTH(0));
  at += RTA_LENGTH(0);
  std::vector<unsigned> types;
  for (std::size_t end = at - RTA_LENGTH(0) + info.rta_len; at < end;
       at += RTA_ALIGN(attr(at).rta_len)) {
    const auto a = attr(at);
    types.push_back(a.rta_type & NLA_TYPE_MASK);
    if ((a.rta_type & NLA_TYPE_MASK) == IFLA_VF_MAC) {
      ifla_vf_mac m{};
      ASSERT_EQ(a.rta_len, RTA_LENGTH(sizeof m));
      std::memcpy(&m, bytes.data() + at + RTA_LENGTH(0), sizeof m);
      EXPECT_EQ(m.vf, 3U);
      EXPECT_EQ(std::vector<uint8_t>(m.mac, m.mac + 6),
                (std::vector<uint8_t>{0x06, 0x00, 0x00, 0x01, 0x00, 0x03}));
    } else if ((a.rta_type & NLA_TYPE_MASK) == IFLA_VF_VLAN_LIST) {
      ifla_vf_vlan_info v{};
      const auto inner = attr(at + RTA_LENGTH(0));
      EXPECT_EQ(inner.rta_type, IFLA_VF_VLAN_INFO);
      std::memcpy(&v, bytes.data() + at + 2 * RTA_LENGTH(0), sizeof v);
      EXPECT_EQ(v.vf, 3U);
      EXPECT_EQ(v.vlan, 10U);
      EXPECT_EQ(v.qos, 3U);
      EXPECT_EQ(v.vlan_proto, htons(ETH_P_8021Q));
    } else if ((a.rta_type & NLA_TYPE_MASK) == IFLA_VF_TRUST) {
      ifla_vf_trust t{};
      std::memcpy(&t, bytes.data() + at + RTA_LENGTH(0), sizeof t);
      EXPECT_EQ(t.vf, 3U);
      EXPECT_EQ(t.setting, 1U);
    }
  }
  EXPECT_EQ(types, (std::vector<unsigned>{IFLA_VF_MAC, IFLA_VF_VLAN_LIST, IFLA_VF_TRUST}));
  // Up: IFF_UP in ifi_flags and ifi_change, nothing else.
  const auto up = vfready::host::plain_link_request_bytes({.kind = Kind::kSetUp, .ifindex = 5});
  ASSERT_TRUE(up);
  std::memcpy(&ifi, up->data() + NLMSG_LENGTH(0), sizeof ifi);
  EXPECT_EQ(ifi.ifi_flags, unsigned{IFF_UP});
  EXPECT_EQ(ifi.ifi_change, unsigned{IFF_UP});
  EXPECT_EQ(up->size(), NLMSG_SPACE(sizeof(ifinfomsg)));
}
