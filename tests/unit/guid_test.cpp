// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/guid.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using testing::HasSubstr;
using vfready::model::Guid;

TEST(AGuid, ParsesEightBytesAndFourGroupsToTheSameValue) {
  auto bytes = Guid::parse("a0:88:C2:03:00:30:10:00");
  auto groups = Guid::parse("a088:c203:0030:1000");
  ASSERT_TRUE(bytes) << bytes.error().message;
  ASSERT_TRUE(groups) << groups.error().message;
  EXPECT_EQ(bytes->value(), 0xa088c20300301000u);
  EXPECT_EQ(*bytes, *groups);
}

TEST(AGuid, PrintsBothForms) {
  const Guid g{0x0200000000000001u};
  EXPECT_EQ(g.str(), "02:00:00:00:00:00:00:01");
  EXPECT_EQ(g.sysfs_str(), "0200:0000:0000:0001");
  EXPECT_EQ(Guid::parse(g.str()).value(), g);
  EXPECT_EQ(Guid::parse(g.sysfs_str()).value(), g);
  const Guid every_digit{0x0123456789abcdefu};
  EXPECT_EQ(every_digit.str(), "01:23:45:67:89:ab:cd:ef");
  EXPECT_EQ(every_digit.sysfs_str(), "0123:4567:89ab:cdef");
  EXPECT_EQ(every_digit.text().view(), "01:23:45:67:89:ab:cd:ef");  // the same, in place
  EXPECT_EQ(Guid{~uint64_t{0}}.text().view(), "ff:ff:ff:ff:ff:ff:ff:ff");
}

TEST(AGuid, KnowsZeroAndAllOnesAreNotAssignable) {
  const auto zero = Guid::parse("00:00:00:00:00:00:00:00").value();
  const auto ones = Guid::parse("ffff:ffff:ffff:ffff").value();
  EXPECT_TRUE(zero.is_zero());
  EXPECT_FALSE(zero.is_assignable());
  EXPECT_TRUE(ones.is_all_ones());
  EXPECT_FALSE(ones.is_assignable());
  EXPECT_TRUE(Guid{2}.is_assignable());
}

TEST(AGuid, RejectsMalformedTextNamingTheFormsItTakes) {
  for (const char* bad : {"", "02:00:00:00:00:00:00", "02:00:00:00:00:00:00:00:00",
                          "0200:0000:0000", "02-00-00-00-00-00-00-01", "0x0200000000000001"}) {
    auto g = Guid::parse(bad);
    ASSERT_FALSE(g) << bad;
    EXPECT_THAT(g.error().message, HasSubstr("expected eight colon-separated bytes")) << bad;
  }
  // Of the right length too (a spelling the quick walk takes in full, or leaves to the
  // rest): a digit that is none, a group one digit short beside one too long.
  for (const char* bad :
       {"2:00:00:00:00:00:00:01", "02:00:00:00:00:00:00:1g", "200:0000:0000:0001",
        "02:00:00:00:00:00:00:01\n", "02:00:00:00:00:00:0G:01", "020:0:00:00:00:00:00:01",
        "a088:c203:0030:100g", "a08:8c203:0030:1000", "0:200:00:00:00:00:00:01"}) {
    auto g = Guid::parse(bad);
    ASSERT_FALSE(g) << bad;
    EXPECT_THAT(g.error().message, HasSubstr("hex digits")) << bad;
  }
}
