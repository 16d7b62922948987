// SPDX-License-Identifier: Apache-2.0
// How long the status files wait to be written again during a bring-up.
#include <gtest/gtest.h>

#include "status_files.hpp"

using vfready::daemon::StatusFiles;
using namespace std::chrono_literals;

// A write renders every VF: the wait between writes grows with them, so that a large
// node's bring-up spends no larger a share of the loop on its status files.
TEST(TheStatusFilesCoalesceTime, GrowsWithTheVfsAWriteRenders) {
  EXPECT_EQ(StatusFiles::coalesce_after(0), StatusFiles::kCoalesce);
  EXPECT_EQ(StatusFiles::coalesce_after(16), 204ms);
  EXPECT_EQ(StatusFiles::coalesce_after(2032), 708ms);
  EXPECT_LT(StatusFiles::coalesce_after(127), StatusFiles::coalesce_after(128));
}

// On a machine too busy or too slow for the wait above, the writes take no larger a
// share of the loop than a twentieth: the wait is at least twenty times the last write.
TEST(TheStatusFilesCoalesceTime, IsAtLeastTwentyTimesWhatTheLastWriteTook) {
  EXPECT_EQ(StatusFiles::coalesce_after(2032, 10ms), 708ms);
  EXPECT_EQ(StatusFiles::coalesce_after(2032, 100ms), 2000ms);
  EXPECT_EQ(StatusFiles::coalesce_after(0, 1500us), StatusFiles::kCoalesce);
  EXPECT_EQ(StatusFiles::coalesce_after(16, 11ms), 220ms);
}
