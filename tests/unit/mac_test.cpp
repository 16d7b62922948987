// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/mac.hpp"

#include <gtest/gtest.h>

#include <set>

namespace {

using vfready::model::derive_vf_mac;
using vfready::model::Mac;

TEST(AMac, ParsesSixHexBytesEitherCaseAndWritesThemLowerCase) {
  auto m = Mac::parse("02:AA:bb:0C:dd:01\n");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->str(), "02:aa:bb:0c:dd:01");
  EXPECT_EQ(m->value(), 0x02aabb0cdd01ULL);
  EXPECT_EQ(Mac::from_value(0x02aabb0cdd01ULL), m.value());
  for (const char* bad : {"", "02:aa:bb:cc:dd", "02:aa:bb:cc:dd:01:02", "02-aa-bb-cc-dd-01",
                          "2:aa:bb:cc:dd:01:", "0g:aa:bb:cc:dd:01", "02:aa:bb:cc:dd:0"}) {
    EXPECT_FALSE(Mac::parse(bad)) << bad;
  }
  EXPECT_NE(Mac::parse("xx").error().message.find("six colon-separated hex bytes"),
            std::string::npos);
}

TEST(AMac, IsAssignableOnlyWhenUnicastAndNotZero) {
  EXPECT_TRUE(Mac::parse("02:00:00:00:00:01")->is_assignable());
  EXPECT_FALSE(Mac::parse("00:00:00:00:00:00")->is_assignable());
  EXPECT_FALSE(Mac::parse("01:00:5e:00:00:01")->is_assignable());
  EXPECT_FALSE(Mac::parse("ff:ff:ff:ff:ff:ff")->is_assignable());
}

TEST(ADerivedVfMac, IsLocalUnicastStableAndDistinctAcrossVfsAndPortsOfOneNic) {
  const auto port0 = Mac::parse("52:54:00:12:34:56").value();
  const auto port1 = Mac::parse("52:54:00:12:34:57").value();
  std::set<Mac> seen;
  for (const auto& pf : {port0, port1}) {
    for (uint16_t vf = 0; vf < 300; ++vf) {
      const auto mac = derive_vf_mac(pf, vf);
      EXPECT_TRUE(mac.is_local()) << mac.str();
      EXPECT_TRUE(mac.is_assignable()) << mac.str();
      EXPECT_EQ(mac, derive_vf_mac(pf, vf));
      EXPECT_TRUE(seen.insert(mac).second) << mac.str() << " twice";
    }
  }
  // The NIC part and the index are where they are said to be.
  EXPECT_EQ(derive_vf_mac(port0, 0x0102).str().substr(2), ":12:34:56:01:02");
}

}  // namespace
