// SPDX-License-Identifier: Apache-2.0
// When vfready stops fighting another tool over a link's name, and when it starts again.
#include "name_fights.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using vfready::daemon::Drift;
using vfready::daemon::NameFights;
using namespace std::chrono_literals;

namespace {

Drift renamed_to(const std::string& name) {
  return Drift{"0000:18:00.0", "0000:18:00.2", name, "renamed", true, "ibs0v1"};
}

}  // namespace

TEST(NameFights, NamesBackAtOnceUpToTheBoundThenStopsAndSaysWhoAndWhat) {
  NameFights fights;
  const auto t0 = NameFights::Clock::time_point{} + 1h;
  for (std::size_t i = 0; i < NameFights::kRenames; ++i) {
    const auto v = fights.renamed(renamed_to("fighter0"), t0 + i * 1s);
    EXPECT_TRUE(v.repair_now) << i;
    EXPECT_FALSE(v.started);
    fights.named_back("0000:18:00.0");
  }
  const auto v = fights.renamed(renamed_to("fighter0"), t0 + 10s);
  EXPECT_FALSE(v.repair_now);
  ASSERT_TRUE(v.started);
  EXPECT_EQ(v.started->kind, vfready::model::EventKind::kNameContested);
  EXPECT_THAT(v.started->text,
              testing::HasSubstr("VF 0000:18:00.2 (ibs0v1) was renamed to fighter0"));
  EXPECT_THAT(v.started->text, testing::HasSubstr("once every 60 s"));
  // Later renames in the fight: not named back at once, and said once.
  const auto later = fights.renamed(renamed_to("fighter1"), t0 + 20s);
  EXPECT_FALSE(later.repair_now);
  EXPECT_FALSE(later.started);
  EXPECT_TRUE(fights.fighting("0000:18:00.0", "0000:18:00.2", t0 + 30s));
  ASSERT_EQ(fights.problems(t0 + 30s).size(), 1u);
  EXPECT_THAT(fights.problems(t0 + 30s).front().text, testing::HasSubstr("renamed to fighter1"));
}

TEST(NameFights, IsOverAWindowAfterTheLastRenameAndRenamesSpreadOutAreNone) {
  NameFights fights;
  const auto t0 = NameFights::Clock::time_point{} + 1h;
  for (std::size_t i = 0; i <= NameFights::kRenames; ++i) {
    static_cast<void>(fights.renamed(renamed_to("fighter0"), t0 + i * 1s));
    fights.named_back("0000:18:00.0");
  }
  EXPECT_TRUE(fights.fighting("0000:18:00.0", "0000:18:00.2", t0 + 10s));
  const auto quiet = t0 + 10s + NameFights::kWindow;
  EXPECT_FALSE(fights.fighting("0000:18:00.0", "0000:18:00.2", quiet));
  EXPECT_TRUE(fights.problems(quiet).empty());
  EXPECT_TRUE(fights.renamed(renamed_to("fighter0"), quiet + 1s).repair_now) << "a new start";

  // One rename every 13 s never has more than the bound within a window.
  NameFights spread;
  for (int i = 0; i < 50; ++i) {
    EXPECT_TRUE(spread.renamed(renamed_to("x"), t0 + i * 13s).repair_now) << i;
    spread.named_back("0000:18:00.0");
  }
}

// The events of one rename (seen again when a pass ends, an MTU or carrier change of the
// link) count once: a rename counts only after vfready named the link back.
TEST(NameFights, CountsOneRenameOnceHoweverManyEventsShowIt) {
  NameFights fights;
  const auto t0 = NameFights::Clock::time_point{} + 1h;
  for (int i = 0; i < 20; ++i) {
    EXPECT_TRUE(fights.renamed(renamed_to("fighter0"), t0 + i * 100ms).repair_now) << i;
  }
  EXPECT_FALSE(fights.fighting("0000:18:00.0", "0000:18:00.2", t0 + 3s));
}
