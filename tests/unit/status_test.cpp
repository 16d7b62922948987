// SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

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
  v.in_use = {vfready::model::VfUse::Why::kOtherDriver, "vfio-pci"};
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

TEST(TheStatusJson, SaysNullForWhatIsUnknownAndGivesTimesAsDatesAndWholeMs) {
  DaemonStatus s;
  s.started_unix_ms = 1'796'147'305'000;  // 2026-12-01T17:48:25Z
  s.ready_ms = 1234.7;
  PfStatus pf;
  pf.pci = PciAddress::parse("0000:18:00.0").value();
  pf.port_state = "4: ACTIVE";
  pf.identity.vf_device = 0x101e;
  pf.steps.push_back({"vfs", StepState::kDone, 10.5, 20.25});
  pf.vfs.push_back(vf("0000:18:00.1"));
  s.pfs.push_back(pf);
  const auto j = to_json(s, s.started_unix_ms + 5000);
  EXPECT_EQ(j["schema_version"], kStatusSchemaVersion);
  EXPECT_EQ(j["generated_at"], "2026-12-01T17:48:30.000Z");
  EXPECT_EQ(j["ready_ms"], 1234);
  EXPECT_EQ(j["ready_at"], "2026-12-01T17:48:26.234Z");
  const auto& p = j["pfs"][0];
  EXPECT_TRUE(p["name"].is_null());
  EXPECT_EQ(p["port_state"]["value"], 4);
  EXPECT_EQ(p["port_state"]["name"], "ACTIVE");
  EXPECT_EQ(p["vf_device"], "101e");
  EXPECT_TRUE(p["device"].is_null());
  EXPECT_EQ(p["steps"][0]["started_ms"], 10);
  EXPECT_EQ(p["steps"][0]["started_at"], "2026-12-01T17:48:25.010Z");
  EXPECT_TRUE(p["vfs"][0]["in_use"].is_null());
  EXPECT_TRUE(p["vfs"][0]["guid"].is_null());
  EXPECT_TRUE(to_json(DaemonStatus{})["ready_ms"].is_null());
}

TEST(APortState, ReadsAsNumberAndNameOrNull) {
  EXPECT_EQ(port_state_json("1: DOWN")["value"], 1);
  EXPECT_EQ(port_state_json("1: DOWN")["name"], "DOWN");
  EXPECT_TRUE(port_state_json("").is_null());
  EXPECT_TRUE(port_state_json("ACTIVE").is_null());
  EXPECT_TRUE(port_state_json("x: ACTIVE").is_null());
  EXPECT_TRUE(port_state_json("4: ").is_null());
}

TEST(APfLookup, FindsAPfByAnyOfItsNamesOrAVfInTheStatusAndInItsJson) {
  DaemonStatus s;
  for (const char* pci : {"0000:18:00.0", "0000:40:00.0"}) {
    PfStatus pf;
    pf.pci = PciAddress::parse(pci).value();
    s.pfs.push_back(pf);
  }
  // The second failed before it was renamed: it has no name, but the plan's and the kernel's.
  s.pfs[0].name = "ibs0";
  s.pfs[0].vfs.push_back(vf("0000:18:00.1"));
  s.pfs[0].vfs[0].name = "ibs0v0";
  s.pfs[1].identity.configured_name = "ibs1";
  s.pfs[1].identity.kernel_name = "ibp64s0";
  const auto j = to_json(s);
  for (const char* key : {"ibs1", "ibp64s0", "0000:40:00.0"}) {
    EXPECT_EQ(find_pf(s, key), &s.pfs[1]) << key;
    ASSERT_NE(find_pf(j, key), nullptr) << key;
    EXPECT_EQ((*find_pf(j, key))["pci"], "0000:40:00.0") << key;
  }
  for (const char* key : {"ibs0v0", "0000:18:00.1", "ibs0"}) {
    EXPECT_EQ(find_pf(s, key), &s.pfs[0]) << key;
    ASSERT_NE(find_pf(j, key), nullptr) << key;
    EXPECT_EQ((*find_pf(j, key))["pci"], "0000:18:00.0") << key;
  }
  EXPECT_EQ(find_pf(s, "ibs9"), nullptr);
  EXPECT_EQ(find_pf(j, "ibs9"), nullptr);
  EXPECT_EQ(find_pf(j, ""), nullptr);
}

TEST(TheStatusJson, SaysNullForAProblemOfNoPfOrVf) {
  DaemonStatus s;
  s.problems.push_back(problem(EventKind::kModuleMissing, "module mlx5_ib is not loaded"));
  const auto j = to_json(s);
  EXPECT_TRUE(j["problem_details"][0]["pf"].is_null());
  EXPECT_TRUE(j["problem_details"][0]["vf"].is_null());
}

TEST(TheStatusFile, SaysWhatDescribeSays) {
  DaemonStatus s;
  s.started_unix_ms = 1'796'147'305'000;
  s.state = DaemonState::kReady;
  s.node_ready = true;
  for (const char* pci : {"0000:18:00.0", "0000:40:00.0"}) {
    PfStatus pf;
    pf.pci = PciAddress::parse(pci).value();
    pf.vfs.push_back(vf("0000:18:00.1"));
    pf.steps.push_back({"vfs", StepState::kDone, 1.0, 2.0});
    s.pfs.push_back(pf);
  }
  s.problems.push_back(problem(EventKind::kReloadRefused, "bad"));
  s.pfs[1].vfs[0].name = "ibs1v0";
  s.pfs[1].vfs[0].problems.push_back(
      problem(EventKind::kGuidConflict, "GUID \"x\"\n taken", "0000:40:00.0", "0000:40:00.1"));
  const auto text = status_file_text(s, 1'796'147'306'000);
  ASSERT_EQ(text.back(), '\n');
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << "one line";
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["generated_at"], "2026-12-01T17:48:26.000Z");
  EXPECT_EQ(j["node_ready"], true);
  EXPECT_EQ(j["problem_details"][0]["code"], "reload-refused");
  EXPECT_EQ(j["pf_count"], 2);
  EXPECT_EQ(j["vf_count"], 2);
  ASSERT_EQ(j["pfs"].size(), 2U);
  EXPECT_EQ(j["pfs"][1]["pci"], "0000:40:00.0");
  EXPECT_EQ(j["pfs"][1]["steps"][0]["started_at"], "2026-12-01T17:48:25.001Z");
  const auto& v = j["pfs"][1]["vfs"][0];
  EXPECT_EQ(v["name"], "ibs1v0");
  EXPECT_EQ(v["state"], "failed");
  EXPECT_EQ(v["problems"][0], "GUID \"x\"\n taken");
  EXPECT_EQ(v["problem_details"][0]["vf"], "0000:40:00.1");
  EXPECT_EQ(j["pfs"][1]["events"][0]["event"], "guid-conflict");
  EXPECT_EQ(j["pfs"][0]["vfs"][0]["altnames"], nlohmann::json::array());
  // What Describe() sends for the daemon is the same text, but for the date it was made.
  EXPECT_EQ(nlohmann::json::parse(json_text(s, 1'796'147'306'000)), j);
}

// A status file is outside input: a reader takes a flag or a number only of its type.
TEST(TheStatusJson, IsReadForFlagsAndNumbersOnlyOfTheirType) {
  const auto j = nlohmann::json::parse(
      R"({"node_ready": "yes", "degraded": true, "passes_finished": -1, "vfs": 3, "n": "3"})");
  EXPECT_FALSE(flag_at(j, "node_ready", false));
  EXPECT_TRUE(flag_at(j, "node_ready", true));
  EXPECT_TRUE(flag_at(j, "degraded", false));
  EXPECT_FALSE(flag_at(j, "absent", false));
  EXPECT_EQ(number_at(j, "passes_finished", uint64_t{7}), 7U);
  EXPECT_EQ(number_at(j, "passes_finished", int64_t{7}), -1);
  EXPECT_EQ(number_at(j, "vfs", uint32_t{0}), 3U);
  EXPECT_EQ(number_at(j, "n", 0), 0);
}

// A status file's numbers are outside input: one a whole T does not hold is not taken
// (the status reader's fuzzer found an index of 1e80, which converting to int is
// undefined).
TEST(TheStatusJson, IsReadForWholeNumbersOnlyWhereTheyFit) {
  const auto j = nlohmann::json::parse(
      R"({"index": 1.11111e80, "half": 2.5, "big": 4294967296, "ms": 1.5, "neg": -3})");
  EXPECT_EQ(number_at(j, "index", 7), 7);
  EXPECT_EQ(number_at(j, "half", 7), 7);
  EXPECT_EQ(number_at(j, "big", 7), 7);
  EXPECT_EQ(number_at(j, "big", uint32_t{7}), 7U);
  EXPECT_EQ(number_at(j, "big", uint64_t{7}), 4294967296U);
  EXPECT_EQ(number_at(j, "neg", uint16_t{7}), 7U);
  EXPECT_EQ(number_at(j, "neg", 0), -3);
  EXPECT_DOUBLE_EQ(number_at(j, "ms", 0.0), 1.5);
  EXPECT_DOUBLE_EQ(number_at(j, "index", 0.0), 1.11111e80);
}
