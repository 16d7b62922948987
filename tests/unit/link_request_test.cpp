// SPDX-License-Identifier: Apache-2.0
// What a link request is called in the text of a call that gets stuck, and its bytes.
#include <gtest/gtest.h>

#include "vfready/host/links.hpp"

using vfready::host::describe;
using vfready::host::LinkRequest;
using Kind = LinkRequest::Kind;

TEST(ALinkRequest, IsDescribedByWhatItDoesAndToWhichLink) {
  EXPECT_EQ(describe({Kind::kGet, 7}), "a netlink lookup of ifindex 7");
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
  LinkRequest by_name{Kind::kByName, 0, "ibp24s0v3"};
  LinkRequest by_altname{Kind::kByName, 0, "enP1p24s0f0v127altname"};  // past IFNAMSIZ
  for (const auto& r : {mtu_only, both, odd, full, get, by_name, by_altname}) {
    const auto plain = plain_link_request_bytes(r);
    ASSERT_TRUE(plain) << describe(r);
    EXPECT_EQ(*plain, libnl_link_request_bytes(r)) << describe(r);
  }
  EXPECT_FALSE(plain_link_request_bytes({Kind::kAddAltname, 7, "x"}));
  EXPECT_FALSE(plain_link_request_bytes({Kind::kDelAltname, 7, "x"}));
}
