// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/version.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using testing::ElementsAre;
using testing::HasSubstr;
using vfready::model::Version;

Version v(const char* text) { return Version::parse(text).value(); }

TEST(AVersion, ComparesNumericallyNotAsText) {
  EXPECT_LT(v("28.9.1014"), v("28.43.1014"));
  EXPECT_LT(v("28.43.999"), v("28.43.1014"));
  EXPECT_GT(v("32.43.1014"), v("28.43.1014"));
  EXPECT_EQ(v("28.43.1014"), v("28.43.1014"));
}

TEST(AVersion, TreatsMissingTrailingComponentsAsZero) {
  EXPECT_EQ(v("24.10"), v("24.10.0"));
  EXPECT_LT(v("24.10"), v("24.10.1"));
}

TEST(AVersion, ReadsOfedVersionsWithADash) {
  EXPECT_THAT(v("24.10-0.7.0").components(), ElementsAre(24, 10, 0, 7, 0));
  EXPECT_LT(v("24.07-0.6.1"), v("24.10-0.7.0"));
  EXPECT_EQ(v("24.10-0.7.0").str(), "24.10-0.7.0");
}

TEST(AVersion, TakesTheNumericPrefixOfAKernelRelease) {
  auto k = Version::parse_prefix("6.8.0-55-generic");
  ASSERT_TRUE(k) << k.error().message;
  EXPECT_THAT(k->components(), ElementsAre(6, 8, 0, 55));
  EXPECT_EQ(k->str(), "6.8.0-55-generic");
  EXPECT_LT(Version::parse_prefix("6.1.0-28-amd64").value(), k.value());
  EXPECT_THAT(Version::parse_prefix("generic").error().message, HasSubstr("\"generic\""));
}

TEST(AVersion, RejectsNonNumericComponentsWithAnExample) {
  for (const char* bad : {"", "28.43.", ".28", "28..43", "28.43a", "v28", "6.8.0-55-generic"}) {
    auto r = Version::parse(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_THAT(r.error().message, HasSubstr("28.43.1014")) << bad;
  }
}
