// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/name_template.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using testing::HasSubstr;
using vfready::model::NameTemplate;

TEST(ANameTemplate, RendersFieldsBetweenLiterals) {
  auto t = NameTemplate::parse("ib{pf_index}v{vf}");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->render({{"pf_index", "3"}, {"vf", "7"}}), "ib3v7");
  EXPECT_TRUE(t->uses("vf"));
  EXPECT_FALSE(t->uses("pci"));
  EXPECT_EQ(NameTemplate::parse("plain")->render({}), "plain");
}

TEST(ANameTemplate, RejectsUnknownFieldsListingTheKnownOnes) {
  auto t = NameTemplate::parse("ib{pf}v{vf}");
  ASSERT_FALSE(t);
  EXPECT_THAT(t.error().message, HasSubstr("unknown field {pf}"));
  EXPECT_THAT(t.error().message, HasSubstr("{pf_index}"));
  EXPECT_THAT(t.error().message, HasSubstr("{vf_pci}"));
}

TEST(ANameTemplate, RejectsUnbalancedBraces) {
  EXPECT_THAT(NameTemplate::parse("ib{vf").error().message, HasSubstr("is not closed"));
  EXPECT_THAT(NameTemplate::parse("ib}vf").error().message, HasSubstr("unmatched '}'"));
}
