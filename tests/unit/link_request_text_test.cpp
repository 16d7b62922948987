// SPDX-License-Identifier: Apache-2.0
// What a link request is called in the text of a call that gets stuck.
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
