// SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "vfready/model/status.hpp"
#include "vfready/model/status_json.hpp"

using namespace vfready::model;

namespace {

VfStatus vf(const char* pci) {
  VfStatus v;
  v.pci = PciAddress::parse(pci).value();
  return v;
}

}  // namespace

TEST(AVfState, IsFailedWithAProblemInUseWhenSomethingHasItReadyOtherwise) {
  auto v = vf("0000:18:00.1");
  EXPECT_EQ(state_of(v), VfState::kReady);
  v.in_use = "bound to vfio-pci";
  EXPECT_EQ(state_of(v), VfState::kInUse);
  v.problems.push_back(problem(EventKind::kGuidConflict, "wrong GUID", "0000:18:00.0"));
  EXPECT_EQ(state_of(v), VfState::kFailed);
}

TEST(TheStatusJson, KeepsProblemTextsAndAddsTheirCodesAndStates) {
  DaemonStatus s;
  s.state = state_of(Outcome::kDegraded);
  PfStatus pf;
  pf.pci = PciAddress::parse("0000:40:00.0").value();
  pf.state = PfState::kFailed;
  pf.problems.push_back(
      problem(EventKind::kNumvfsFailed, "writing 8 failed with EIO", "0000:40:00.0"));
  pf.steps.push_back({"vfs", StepState::kFailed, 1.0, 2.0});
  pf.vfs.push_back(vf("0000:40:00.1"));
  s.pfs.push_back(pf);
  const auto j = to_json(s);
  EXPECT_EQ(j["state"], "degraded");
  const auto& p = j["pfs"][0];
  EXPECT_EQ(p["pci"], "0000:40:00.0");
  EXPECT_EQ(p["problems"][0], "writing 8 failed with EIO");
  EXPECT_EQ(p["problem_details"][0]["code"], "numvfs-failed");
  EXPECT_EQ(p["problem_details"][0]["message_id"], event_info(EventKind::kNumvfsFailed).message_id);
  EXPECT_FALSE(p["problem_details"][0]["remedy"].get<std::string>().empty());
  EXPECT_EQ(p["steps"][0]["state"], "failed");
  EXPECT_EQ(p["vfs"][0]["state"], "ready");
  EXPECT_EQ(p["events"][0]["event"], "numvfs-failed");
  EXPECT_EQ(find_pf(s, "0000:40:00.1"), &s.pfs[0]);
}
