// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/if_name.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using testing::HasSubstr;
using vfready::model::AltName;
using vfready::model::IfName;

TEST(AnIfName, AcceptsKernelStyleNamesUpToFifteenBytes) {
  for (const char* ok : {"ibp24s0", "ibp24s0v3", "a", "enp170s0f0np0v7", "x-y_z.w@1"}) {
    auto n = IfName::parse(ok);
    ASSERT_TRUE(n) << n.error().message;
    EXPECT_EQ(n->str(), ok);
  }
}

TEST(AnIfName, RejectsSixteenBytesSayingHowLongItIs) {
  auto n = IfName::parse("abcdefghijklmnop");
  ASSERT_FALSE(n);
  EXPECT_THAT(n.error().message, HasSubstr("\"abcdefghijklmnop\""));
  EXPECT_THAT(n.error().message, HasSubstr("16 bytes, at most 15"));
}

TEST(AnIfName, RejectsWhatTheKernelRejects) {
  EXPECT_THAT(IfName::parse("").error().message, HasSubstr("empty"));
  EXPECT_THAT(IfName::parse(".").error().message, HasSubstr("reserved"));
  EXPECT_THAT(IfName::parse("..").error().message, HasSubstr("reserved"));
  EXPECT_THAT(IfName::parse("ib/0").error().message, HasSubstr("\"/\""));
  EXPECT_THAT(IfName::parse("ib:0").error().message, HasSubstr("\":\""));
  EXPECT_THAT(IfName::parse("ib 0").error().message, HasSubstr("whitespace"));
  EXPECT_THAT(IfName::parse("ib0\n").error().message, HasSubstr("\"\\n\""));
  EXPECT_THAT(IfName::parse("ib\t0").error().message, HasSubstr("\"\\t\""));
  EXPECT_FALSE(IfName::parse(std::string_view("ib\0", 3)));
}

// The kernel's isspace() is Latin-1: 0xA0 is whitespace to it, and UTF-8 puts that byte
// inside characters such as a no-break space (c2 a0) or "à" (c3 a0).
TEST(AnIfName, RejectsBytesTheKernelTakesForWhitespaceInsideUtf8) {
  for (const char* bad : {"ib\xc2\xa0"
                          "0",
                          "ib\xc3\xa0", "gpu\xc3\xa9"}) {
    const auto n = IfName::parse(bad);
    ASSERT_FALSE(n) << bad;
    EXPECT_THAT(n.error().message, HasSubstr("only printable ASCII"));
  }
  EXPECT_FALSE(IfName::parse("ib\x1b[31m"));
  EXPECT_FALSE(IfName::parse("ib\x7f"));
}

// dev_get_valid_name() takes "%d" as a pattern: the netdev would get a number of the
// kernel's choosing, not the name asked for.
TEST(AnIfName, RejectsAPercentSign) {
  for (const char* bad : {"ib%d", "ib%", "%s"}) {
    const auto n = IfName::parse(bad);
    ASSERT_FALSE(n) << bad;
    EXPECT_THAT(n.error().message, HasSubstr("'%'"));
  }
  EXPECT_FALSE(AltName::parse("gpu%d-ib"));
}

TEST(AnAltName, AllowsUpTo127BytesButNotMore) {
  EXPECT_TRUE(AltName::parse(std::string(127, 'a')));
  auto too_long = AltName::parse(std::string(128, 'a'));
  ASSERT_FALSE(too_long);
  EXPECT_THAT(too_long.error().message, HasSubstr("alternative interface name"));
  EXPECT_THAT(too_long.error().message, HasSubstr("128 bytes, at most 127"));
  EXPECT_FALSE(AltName::parse("gpu0/ib"));
}
