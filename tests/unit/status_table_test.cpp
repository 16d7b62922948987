// SPDX-License-Identifier: Apache-2.0
// The status table vfreadyctl prints: what a pass took and changed, only once it has an
// outcome; each PF's VFs ready of those configured.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "vfready/model/status_table.hpp"

using namespace vfready::model;
using testing::HasSubstr;
using testing::Not;

namespace {

nlohmann::json status_in(const std::string& state) {
  return nlohmann::json::parse(R"({
    "state": ")" + state + R"(", "status": "s", "ready_ms": 90000, "pass_ms": 412,
    "changes": {"summary": null},
    "pfs": [{"pci": "0000:40:00.0", "name": "ibp64s0", "state": "failed",
             "link_layer": "InfiniBand", "port_state": {"value": 4, "name": "ACTIVE"},
             "vfs_configured": 8, "vfs": [], "problems": ["EIO"]}]})");
}

}  // namespace

TEST(TheStatusTable, GivesThePassDurationAndWhatItChangedOnceItHasAnOutcome) {
  const auto ready = render_status(status_in("ready"), false, false);
  EXPECT_THAT(ready, HasSubstr("State: ready (s), outcome after 412 ms\n"));
  EXPECT_THAT(ready, HasSubstr("\nChanged: nothing needed changing\n"));
  // A pass that failed may have changed nothing because a write failed: not "needed".
  const auto degraded = render_status(status_in("degraded"), false, false);
  EXPECT_THAT(degraded, HasSubstr("\nChanged: nothing\n"));
  EXPECT_THAT(degraded, Not(HasSubstr("needed")));
  // While a pass runs, what is on record is the last pass's.
  for (const char* running : {"configuring", "starting"}) {
    const auto table = render_status(status_in(running), false, false);
    EXPECT_THAT(table, Not(HasSubstr("Changed:"))) << running;
    EXPECT_THAT(table, Not(HasSubstr("outcome after"))) << running;
  }
}

TEST(TheStatusTable, ShowsAFailedPfsPortAndItsVfsReadyOfThoseConfigured) {
  const auto table = render_status(status_in("degraded"), false, false);
  EXPECT_THAT(table, testing::ContainsRegex(
                         "0000:40:00.0 +ibp64s0 +failed +InfiniBand +ACTIVE +0/8 +- +1\n"));
}
