// SPDX-License-Identifier: Apache-2.0
// One PF's whole pass over the in-memory host: what it changes, what it reports.
#include <gmock/gmock.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "pipeline_fixture.hpp"

using testing::AllOf;
using testing::Contains;
using testing::ElementsAre;
using testing::HasSubstr;
using testing::IsEmpty;
using testing::Not;
using vfready::model::PfState;
using vfready::model::texts;
using vfready::testing::kPf;
using vfready::testing::pipeline_config;

namespace {

std::string all_problems(const vfready::model::PfStatus& s) {
  std::string out;
  for (const auto& p : s.problems) {
    out += p.text + "\n";
  }
  for (const auto& vf : s.vfs) {
    for (const auto& p : vf.problems) {
      out += p.text + "\n";
    }
  }
  return out;
}

}  // namespace

class APfPass : public vfready::testing::PipelineTest {};

TEST_F(APfPass, GivesEveryVfItsGuidBeforeItsOneProbeThenItsNameAltnameAndMtu) {
  const auto s = bring_up();
  ASSERT_EQ(s.state, PfState::kReady) << all_problems(s);
  ASSERT_EQ(s.vfs.size(), 4u);
  EXPECT_EQ(s.name, "ibs0");
  for (const auto& vf : s.vfs) {
    const auto& planned_vf = planned.vf.at(vf.index);
    EXPECT_EQ(vf.guid, planned_vf.guid);
    EXPECT_EQ(vf.name, "ibs0v" + std::to_string(vf.index));
    EXPECT_THAT(vf.altnames, ElementsAre("ib-" + vfready::model::pci_for_names(*planned_vf.pci)));
    EXPECT_EQ(host.get(vf.ifindex)->mtu, 4092u);
    EXPECT_EQ(host.pf(kPf).vfs.at(vf.index).effective, planned_vf.guid);
  }
  EXPECT_THAT(steps, ElementsAre("hardware", "vfs", "guids", "udev", "names", "validate"));
  EXPECT_EQ(host.calls_named("probe").size(), 4u);  // one probe each, GUID already set
  EXPECT_THAT(host.calls_named("unbind"), IsEmpty());
  EXPECT_THAT(host.calls_named("autoprobe"), ElementsAre(std::string("autoprobe ") + kPf + " 0",
                                                         std::string("autoprobe ") + kPf + " 1"));
  EXPECT_TRUE(host.pf(kPf).autoprobe);
  EXPECT_EQ(vfready::model::describe(s.changes), "4 VFs created, 4 GUIDs set, 5 links renamed");
}

TEST_F(APfPass, ChangesNothingTheSecondTime) {
  ASSERT_EQ(bring_up().state, PfState::kReady);
  const auto before = host.calls().size();
  const auto s = bring_up();
  EXPECT_EQ(s.state, PfState::kReady) << all_problems(s);
  EXPECT_EQ(s.sriov_writes, 0u);
  EXPECT_FALSE(s.changes.any()) << vfready::model::describe(s.changes);
  const auto calls = host.calls();
  EXPECT_THAT(std::vector<std::string>(calls.begin() + static_cast<long>(before), calls.end()),
              IsEmpty());
}

TEST_F(APfPass, TurnsAutoprobeBackOnWhenAPassThatDiedLeftItOff) {
  host.create_vfs(kPf, 4);
  host.pf(kPf).autoprobe = false;
  const auto s = bring_up();
  EXPECT_TRUE(host.pf(kPf).autoprobe);
  EXPECT_EQ(s.state, PfState::kReady) << all_problems(s);
  EXPECT_TRUE(s.changes.autoprobe_restored);
}

TEST_F(APfPass, TurnsAutoprobeBackOnEvenWhenTheHardwareCheckFails) {
  host.create_vfs(kPf, 4);
  host.pf(kPf).autoprobe = false;
  host.pf(kPf).info.ports.front().link_layer = "Ethernet";
  const auto s = bring_up();
  EXPECT_EQ(s.state, PfState::kFailed);
  EXPECT_EQ(s.problems.at(0).kind, vfready::model::EventKind::kEthernetFallback);
  EXPECT_TRUE(host.pf(kPf).autoprobe);
  EXPECT_THAT(host.calls_named("numvfs"), IsEmpty());
}

TEST_F(APfPass, ThatFailedStillListsTheVfsItHasUncheckedAndInUse) {
  const auto first = bring_up();
  ASSERT_EQ(first.state, PfState::kReady);
  host.bind_to(kPf, 2, "vfio-pci");
  host.pf(kPf).info.ports.front().link_layer = "Ethernet";
  const auto writes = host.calls_named("numvfs").size();
  const auto s = bring_up();
  EXPECT_EQ(s.state, PfState::kFailed);
  ASSERT_EQ(s.vfs.size(), 4U);
  EXPECT_EQ(s.vfs.at(0).name, "ibs0v0");
  EXPECT_EQ(s.vfs.at(0).guid, first.vfs.at(0).guid);
  EXPECT_EQ(vfready::model::state_of(s.vfs.at(0)), vfready::model::VfState::kUnchecked);
  EXPECT_EQ(vfready::model::state_of(s.vfs.at(2)), vfready::model::VfState::kInUse);
  EXPECT_EQ(host.calls_named("numvfs").size(), writes) << "the failed PF's VFs were touched";
}

TEST_F(APfPass, ProbesVfsLeftUnboundByAPassThatDiedWithTheirGuids) {
  host.pf(kPf).autoprobe = false;
  host.set_num_vfs(vfready::model::PciAddress::parse(kPf).value(), 4);  // unbound, GUID 0
  const auto s = bring_up();
  ASSERT_EQ(s.state, PfState::kReady) << all_problems(s);
  EXPECT_EQ(s.sriov_writes, 0u);
  EXPECT_EQ(host.calls_named("probe").size(), 4u);
  EXPECT_EQ(host.pf(kPf).vfs.at(2).effective, planned.vf.at(2).guid);
}

TEST_F(APfPass, RebindsABoundVfWhoseGuidIsWrong) {
  host.create_vfs(kPf, 4, vfready::model::Guid{0x0200000000000001ULL});
  const auto s = bring_up();
  ASSERT_EQ(s.state, PfState::kReady) << all_problems(s);
  EXPECT_EQ(host.calls_named("unbind").size(), 4u);
  EXPECT_EQ(host.pf(kPf).vfs.at(3).effective, planned.vf.at(3).guid);
  EXPECT_EQ(s.changes.guids_set, 4u);
  EXPECT_EQ(s.changes.vfs_rebound, 4u);
  EXPECT_EQ(s.changes.vfs_created, 0u);
}

TEST_F(APfPass, ReportsAVfItCannotUnbindAndDoesNotProbeIt) {
  host.create_vfs(kPf, 4, vfready::model::Guid{0x0200000000000001ULL});
  host.fail("unbind", EBUSY);
  const auto s = bring_up();
  EXPECT_EQ(s.state, PfState::kFailed);
  EXPECT_THAT(texts(s.vfs.at(0).problems),
              ElementsAre(HasSubstr("unbinding VF 0000:18:00.1 failed")));
  EXPECT_THAT(host.calls_named("probe"), IsEmpty());
  EXPECT_TRUE(host.pf(kPf).autoprobe);
}

TEST_F(APfPass, LeavesAVfInAPodAloneAndReportsItsWrongGuidAsAConflict) {
  host.create_vfs(kPf, 4, vfready::model::Guid{0x0200000000000001ULL});
  host.move_to_pod(kPf, 1);
  const auto s = bring_up();
  EXPECT_EQ(s.state, PfState::kFailed);
  ASSERT_EQ(s.vfs.at(1).problems.size(), 1u);
  EXPECT_THAT(s.vfs.at(1).problems.front().text, HasSubstr("a pod uses it: not rebinding"));
  EXPECT_EQ(s.vfs.at(1).problems.front().kind, vfready::model::EventKind::kGuidConflict);
  EXPECT_EQ(s.vfs.at(1).problems.front().vf, s.vfs.at(1).pci.str());
  EXPECT_THAT(host.calls_named("unbind"), Not(Contains(HasSubstr(s.vfs.at(1).pci.str()))));
  EXPECT_THAT(texts(s.vfs.at(0).problems), IsEmpty());
}

TEST_F(APfPass, CountsAVfBoundToAnotherDriverAsInUseNotAProblem) {
  const auto first = bring_up();
  ASSERT_EQ(first.state, PfState::kReady);
  host.bind_to(kPf, 2, "vfio-pci");
  const auto s = bring_up();
  EXPECT_EQ(s.state, PfState::kReady) << all_problems(s);
  EXPECT_EQ(s.vfs.at(2).in_use.text(), "bound to vfio-pci");
}

TEST_F(APfPass, RefusesToChangeTheCountWhileAVfIsInUse) {
  host.create_vfs(kPf, 2);
  host.bind_to(kPf, 0, "vfio-pci");
  const auto s = bring_up();
  EXPECT_EQ(s.state, PfState::kFailed);
  EXPECT_EQ(s.problems.at(0).code(), "vfs-in-use");
  EXPECT_THAT(s.problems.at(0).text,
              AllOf(HasSubstr("has 2 VFs, 4 configured"), HasSubstr("bound to vfio-pci"),
                    HasSubstr("configure 2")));
  EXPECT_THAT(host.calls_named("numvfs"), IsEmpty());
  EXPECT_TRUE(host.pf(kPf).autoprobe);
}

TEST_F(APfPass, ChangesAnotherCountThroughZero) {
  host.create_vfs(kPf, 2);
  const auto s = bring_up();
  EXPECT_EQ(s.state, PfState::kReady) << all_problems(s);
  EXPECT_THAT(host.calls_named("numvfs"), ElementsAre(std::string("numvfs ") + kPf + " 0",
                                                      std::string("numvfs ") + kPf + " 4"));
}

TEST_F(APfPass, SetsGuidsOverNetlinkWithoutOfedSysfs) {
  host.pf(kPf).info.ofed_sriov = false;
  const auto s = bring_up();
  ASSERT_EQ(s.state, PfState::kReady) << all_problems(s);
  EXPECT_EQ(host.calls_named("netlink-guid").size(), 4u);
  EXPECT_THAT(host.calls_named("guid"), IsEmpty());
  EXPECT_EQ(host.pf(kPf).vfs.at(0).effective, planned.vf.at(0).guid);
}

TEST_F(APfPass, OnTheNetlinkPathNeverCallsAVfWithAZeroGuidReadyAfterARestart) {
  host.pf(kPf).info.ofed_sriov = false;
  host.pf(kPf).ipoib = false;
  ASSERT_NE(bring_up().state, PfState::kReady);  // the GUIDs could not be set
  // A second pass (a restart: nothing remembered) finds the VFs bound with GUID 0.
  const auto s = bring_up();
  EXPECT_EQ(s.state, PfState::kFailed);
  for (const auto& vf : s.vfs) {
    EXPECT_FALSE(vf.problems.empty()) << vf.pci.str();
  }
}

TEST_F(APfPass, CallsNoVfReadyWhoseGuidNothingCanReadBack) {
  host.pf(kPf).info.ofed_sriov = false;
  host.pf(kPf).vf_rdma = false;  // no mlx5_ib: no RDMA device shows the VF's GUID
  const auto s = bring_up();
  EXPECT_EQ(s.state, PfState::kFailed);
  ASSERT_EQ(s.vfs.size(), 4u);
  for (const auto& vf : s.vfs) {
    EXPECT_THAT(texts(vf.problems), ElementsAre(HasSubstr("cannot be read back"))) << vf.pci.str();
  }
  EXPECT_EQ(host.calls_named("probe").size(), 4u);  // one probe each: no reprobe loop
}

TEST_F(APfPass, FailsEveryVfWhenThePfNetdevTakesNoVfGuids) {
  host.pf(kPf).info.ofed_sriov = false;
  host.pf(kPf).ipoib = false;
  const auto s = bring_up();
  EXPECT_EQ(s.state, PfState::kFailed);
  for (const auto& vf : s.vfs) {
    EXPECT_THAT(texts(vf.problems), Contains(HasSubstr("not IPoIB"))) << vf.pci.str();
  }
}

TEST_F(APfPass, ScopesAFailedProbeToItsVf) {
  host.probe_fails.insert("0000:18:00.3");
  const auto s = bring_up();
  EXPECT_EQ(s.state, PfState::kFailed);
  // drivers_probe said nothing: the VF's driver and the kernel log tell.
  EXPECT_THAT(
      texts(s.vfs.at(2).problems),
      ElementsAre(AllOf(HasSubstr("VF 0000:18:00.3 is not bound to mlx5_core after its probe"),
                        HasSubstr("probe of 0000:18:00.3 failed with error -5"))));
  EXPECT_THAT(texts(s.vfs.at(1).problems), IsEmpty());
  EXPECT_EQ(s.vfs.at(3).name, "ibs0v3");
}

// An IPoIB netdev takes at most its broadcast group's MTU, whatever it is given: a VF
// whose MTU reads back lower than planned is not ready, and its problem says why.
TEST_F(APfPass, CallsNoVfReadyWhoseMtuReadsBackLowerAndSaysTheBroadcastGroupMayBeWhy) {
  host.mtu_cap = 2044;
  const auto s = bring_up();
  EXPECT_EQ(s.state, PfState::kFailed);
  for (const auto& vf : s.vfs) {
    EXPECT_THAT(texts(vf.problems),
                ElementsAre(AllOf(HasSubstr("has MTU 2044, not 4092"),
                                  HasSubstr("at most its partition's broadcast group's"))))
        << vf.pci.str();
  }
}

TEST_F(APfPass, NeverTakesANameHeldByANetdevItDoesNotManage) {
  ASSERT_EQ(host.rename(host.pf(kPf).info.ifindex, "ibs0"), 0);
  host.add_pf("0000:29:00.0", "enp41s0f0", false);
  // The plan refuses a name such a netdev holds; this one takes it after the plan.
  planned = target();
  ASSERT_EQ(host.rename(host.by_name("enp41s0f0")->ifindex, "ibs0v1"), 0);
  const auto s = bring_up_planned();
  EXPECT_EQ(s.state, PfState::kFailed);
  EXPECT_THAT(texts(s.vfs.at(1).problems), ElementsAre(HasSubstr("which vfready does not manage")));
  EXPECT_EQ(s.vfs.at(1).problems.front().kind, vfready::model::EventKind::kNameConflict);
  EXPECT_TRUE(host.by_name("ibs0v1").has_value());
}

TEST_F(APfPass, MovesItsOwnNetdevsAsideToSwapTheirNames) {
  ASSERT_EQ(bring_up().state, PfState::kReady);
  const int a = host.by_name("ibs0v0")->ifindex;
  const int b = host.by_name("ibs0v1")->ifindex;
  ASSERT_EQ(host.rename(a, "tmp"), 0);
  ASSERT_EQ(host.rename(b, "ibs0v0"), 0);
  ASSERT_EQ(host.rename(a, "ibs0v1"), 0);
  const auto s = bring_up();
  EXPECT_EQ(s.state, PfState::kReady) << all_problems(s);
  EXPECT_EQ(host.get(a)->name, "ibs0v0");
  EXPECT_EQ(host.get(b)->name, "ibs0v1");
}

TEST_F(APfPass, ReportsAVfUdevNeverFinishedWith) {
  host.udev_initializes = false;
  const auto s = bring_up();
  EXPECT_EQ(s.state, PfState::kFailed);
  EXPECT_THAT(
      texts(s.vfs.at(0).problems),
      Contains(AllOf(HasSubstr("udev did not finish with ibp24s0v0"), HasSubstr("within 50 ms"))));
  EXPECT_EQ(s.vfs.at(0).problems.back().kind, vfready::model::EventKind::kUdevTimeout);
  EXPECT_TRUE(host.pf(kPf).autoprobe);
}

TEST_F(APfPass, WaitsForThePortAndReportsItNotActiveAfterItsBound) {
  host.pf(kPf).info.ports.front().state = "2: INIT";
  // vfready's own bound, a minute, on skipped time.
  auto json = pipeline_config();
  const std::string bound = R"("port_active_ms": 300)";
  json.replace(json.find(bound), bound.size(), R"("port_active_ms": 60000)");
  const auto reads = host.port_reads;
  const auto s = bring_up_on_skipped_time(json);
  EXPECT_EQ(s.state, PfState::kFailed);
  EXPECT_THAT(texts(s.problems),
              ElementsAre("port 1 of PF 0000:18:00.0 is \"2: INIT\", not ACTIVE after 60000 ms: "
                          "check the cable and the subnet manager"));
  // Looked at each kPortLookEvery (250 ms) of the minute, after the validate step's read
  // (one look fewer had the real time between the looks added up to one).
  EXPECT_GE(host.port_reads - reads, 60000U / 250U);
  EXPECT_LE(host.port_reads - reads, 1U + 60000U / 250U);
  EXPECT_TRUE(host.pf(kPf).autoprobe);
}

// The VFs a pass finds bound with the right GUID are not probed: their GUIDs are read
// back through started device calls (OFED's files take the device's lock), fourteen VFs
// a call, each awaited by the pass rather than waited for by its thread.
class APfPassReadingGuidsBack : public APfPass {
 protected:
  std::string sixteen_vfs() {
    auto json = pipeline_config();
    const std::string four = "\"vfs\": 4";
    return json.replace(json.find(four), four.size(), "\"vfs\": 16");
  }
  // Starts the pass over the plan made before; drives it until it ends or waits on a
  // held call.
  void start() {
    names.configure({kPf});
    pass.emplace(vfready::pipeline::pf_pass(planned, config, table, info, os, names, no_progress));
    pass->start(slot);
    go_on();
  }
  void go_on() {
    for (int turn = 0; turn < 1000 && !pass->done() && host.held_probes() == 0; ++turn) {
      vfready::pipeline::wait_for(slot.wait);
      std::exchange(slot.resume, {}).resume();
    }
  }
  // The pass holds a reference to it: it outlives the pass.
  vfready::pipeline::ProgressFn no_progress = [](const char*) {};
  vfready::pipeline::TaskSlot slot;
  std::optional<vfready::pipeline::Task<vfready::model::PfStatus>> pass;
};

TEST_F(APfPassReadingGuidsBack, AwaitsEachCallOfFourteenVfs) {
  ASSERT_EQ(bring_up(sixteen_vfs()).state, PfState::kReady);
  host.guid_reads.clear();
  host.hold_guid_reads = true;
  planned = target(sixteen_vfs());
  start();
  ASSERT_FALSE(pass->done());
  EXPECT_THAT(host.guid_reads, ElementsAre(14));
  ASSERT_TRUE(host.release_probe());
  go_on();
  ASSERT_FALSE(pass->done()) << "the VFs past the first fourteen";
  EXPECT_THAT(host.guid_reads, ElementsAre(14, 2));
  ASSERT_TRUE(host.release_probe());
  go_on();
  ASSERT_TRUE(pass->done());
  const auto s = pass->take();
  EXPECT_EQ(s.state, PfState::kReady) << all_problems(s);
  ASSERT_EQ(s.vfs.size(), 16U);
  for (const auto& vf : s.vfs) {
    EXPECT_EQ(vf.guid, planned.vf.at(vf.index).guid) << vf.index;
  }
  EXPECT_THAT(host.calls_named("probe"), testing::SizeIs(16)) << "none probed again";
}

TEST_F(APfPassReadingGuidsBack, LeavesItsPfStuckAndItsVfsUncheckedWhenAReadDoesNotAnswer) {
  ASSERT_EQ(bring_up().state, PfState::kReady);
  host.hold_guid_reads = true;
  host.held_bound = std::chrono::milliseconds(20);
  planned = target();
  start();
  ASSERT_FALSE(pass->done());
  ASSERT_EQ(host.held_probes(), 1U);
  // Not released: past its bound, the call answers nothing and its PF is stuck.
  for (int turn = 0; turn < 1000 && !pass->done(); ++turn) {
    vfready::pipeline::wait_for(slot.wait);
    std::exchange(slot.resume, {}).resume();
  }
  ASSERT_TRUE(pass->done());
  const auto s = pass->take();
  EXPECT_EQ(s.state, PfState::kStuck) << all_problems(s);
  ASSERT_EQ(s.vfs.size(), 4U);
  for (const auto& vf : s.vfs) {
    EXPECT_FALSE(vf.checked) << vf.index << ": listed as found, not judged";
    EXPECT_THAT(vf.problems, IsEmpty()) << vf.index;
  }
}

// Wherever the pass fails, sriov_drivers_autoprobe is on again at its end.
class APfPassFailingAt : public vfready::testing::PipelineTest,
                         public ::testing::WithParamInterface<const char*> {};

TEST_P(APfPassFailingAt, LeavesAutoprobeOn) {
  const std::string call = GetParam();
  host.fail(call, EIO);
  const auto s = bring_up();
  EXPECT_EQ(s.state, PfState::kFailed) << call;
  EXPECT_TRUE(host.pf(kPf).autoprobe) << call;
  EXPECT_THAT(host.calls_named("autoprobe"), Not(IsEmpty())) << call;
}

INSTANTIATE_TEST_SUITE_P(EveryCall, APfPassFailingAt,
                         ::testing::Values("numvfs", "guid", "probe", "rename", "mtu", "altname"));

TEST_F(APfPass, ProbesNoVfWhileItCannotTurnAutoprobeBackOn) {
  host.fail("autoprobe", EIO, /*after=*/1);  // off works, on again does not
  const auto s = bring_up();
  // The kernel would refuse every probe (pci_device_can_probe()): none is tried.
  EXPECT_EQ(s.state, PfState::kFailed);
  EXPECT_THAT(texts(s.problems), ElementsAre(HasSubstr("cannot turn sriov_drivers_autoprobe of PF "
                                                       "0000:18:00.0 back on")));
  EXPECT_THAT(host.calls_named("probe"), IsEmpty());
  EXPECT_THAT(host.calls_named("guid"), IsEmpty());
  EXPECT_FALSE(host.pf(kPf).autoprobe);
}

TEST_F(APfPass, TurnsAutoprobeBackOnBeforeTheFirstProbe) {
  const auto s = bring_up();
  ASSERT_EQ(s.state, PfState::kReady) << all_problems(s);
  const auto calls = host.calls();
  const auto on = std::find(calls.begin(), calls.end(), std::string("autoprobe ") + kPf + " 1");
  const auto probe = std::find_if(calls.begin(), calls.end(),
                                  [](const std::string& c) { return c.starts_with("probe "); });
  ASSERT_NE(on, calls.end());
  ASSERT_NE(probe, calls.end());
  EXPECT_LT(on - calls.begin(), probe - calls.begin());
}

TEST_F(APfPass, EndsAtOnceWithThePfStuckWhenANumvfsWriteDoesNotReturn) {
  host.fail("numvfs", vfready::host::kStuck);
  const auto s = bring_up();
  EXPECT_EQ(s.state, PfState::kStuck);
  ASSERT_EQ(s.problems.size(), 1u) << all_problems(s);
  EXPECT_EQ(s.problems[0].kind, vfready::model::EventKind::kPfStuck);
  EXPECT_THAT(s.problems[0].text, HasSubstr(std::string("numvfs ") + kPf + " 4"));
  EXPECT_THAT(steps, ElementsAre("hardware", "vfs"));
  // The guard's restore met the PF stuck: no second call was waited for.
  EXPECT_THAT(s.warnings, IsEmpty());
}

TEST_F(APfPass, EndsWithThePfStuckWhenALinkRequestDoesNotReturn) {
  host.fail("rename", vfready::host::kStuck,
            1);  // the PF's own rename answers (named first); VF 0's does not
  const auto s = bring_up();
  EXPECT_EQ(s.state, PfState::kStuck);
  ASSERT_EQ(s.problems.size(), 1u) << all_problems(s);
  EXPECT_EQ(s.problems[0].kind, vfready::model::EventKind::kPfStuck);
  EXPECT_THAT(s.problems[0].text, HasSubstr("is stuck: rename 11 ibs0v0 did not return"));
  for (const auto& vf : s.vfs) {
    EXPECT_THAT(vf.problems, IsEmpty()) << vf.index;  // said once, for the PF
  }
}

TEST_F(APfPass, StopsAtTheFirstGuidWriteThatDoesNotReturnWithOneProblem) {
  host.fail("guid", vfready::host::kStuck, 2);
  const auto s = bring_up();
  EXPECT_EQ(s.state, PfState::kStuck);
  ASSERT_EQ(s.problems.size(), 1u) << all_problems(s);
  EXPECT_EQ(s.problems[0].kind, vfready::model::EventKind::kPfStuck);
  for (const auto& vf : s.vfs) {
    EXPECT_THAT(vf.problems, IsEmpty()) << vf.index;  // said once, for the PF
  }
  EXPECT_THAT(steps, ElementsAre("hardware", "vfs", "guids"));
}

// sriov_numvfs not returning leaves the PF stuck, with its autoprobe turned off for the
// VFs it was making: left off, so that the VFs the write makes when it returns wait
// unbound for the pass that brings the PF up (GUIDs first, then one probe each).
TEST_F(APfPass, LeavesAutoprobeOffWhileItsSriovNumvfsWriteHasNotReturned) {
  host.fail("numvfs", vfready::host::kStuck);
  const auto s = bring_up();
  EXPECT_EQ(s.state, PfState::kStuck);
  EXPECT_THAT(host.calls(), Contains(HasSubstr("autoprobe " + std::string(kPf) + " 0")));
  EXPECT_FALSE(host.pf(kPf).autoprobe);
  EXPECT_THAT(host.calls(), Not(Contains(HasSubstr("autoprobe " + std::string(kPf) + " 1"))));
}

TEST_F(APfPass, TouchesNothingOfAPfFoundStuck) {
  host.create_vfs(kPf, 2);
  host.fail("numvfs", vfready::host::kStuck);
  ASSERT_EQ(host.set_num_vfs(vfready::testing::pci(kPf), 2), vfready::host::kStuck);
  const auto before = host.calls().size();
  const auto s = bring_up();
  EXPECT_EQ(s.state, PfState::kStuck);
  EXPECT_THAT(steps, ElementsAre("hardware"));
  EXPECT_EQ(host.calls().size(), before) << "a call into a stuck PF's driver";
}
