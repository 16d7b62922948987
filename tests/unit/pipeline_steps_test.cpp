// SPDX-License-Identifier: Apache-2.0
// Each step on its own: done, waiting (on what), failed (why).
#include <gmock/gmock.h>

#include "pipeline_fixture.hpp"

using testing::AllOf;
using testing::Contains;
using testing::ElementsAre;
using testing::HasSubstr;
using testing::IsEmpty;
using testing::Not;
using vfready::model::Guid;
using vfready::model::texts;
using vfready::model::VfInfo;
using vfready::model::VfTarget;
using vfready::pipeline::AutoprobeGuard;
using vfready::pipeline::GuidAction;
using vfready::pipeline::GuidPath;
using vfready::pipeline::StepResult;
using vfready::pipeline::VfWork;
using vfready::testing::kPf;
using vfready::testing::pci;

namespace {

VfInfo vf_bound(const char* driver, bool netdev, Guid effective) {
  VfInfo vf;
  vf.driver = driver;
  if (netdev) {
    vf.netdev = "ibp24s0v0";
  }
  vf.effective_guid = effective;
  return vf;
}

vfready::model::Problem timed_out() {
  return vfready::model::problem(vfready::model::EventKind::kUdevTimeout, "x timed out");
}

constexpr auto kNew = vfready::host::UdevWait::Netdev::kNew;
constexpr auto kExisting = vfready::host::UdevWait::Netdev::kExisting;

}  // namespace

class AStep : public vfready::testing::PipelineTest {};

TEST(TheInUseRule, IsAnotherDriverOrANetdevInAnotherNamespace) {
  using Why = vfready::model::VfUse::Why;
  const auto vfio = vfready::pipeline::in_use(vf_bound("vfio-pci", false, Guid{1}));
  EXPECT_EQ(vfio.why, Why::kOtherDriver);
  EXPECT_EQ(vfio.text(), "bound to vfio-pci");
  EXPECT_EQ(vfready::pipeline::in_use(vf_bound("mlx5_core", false, Guid{1})).text(),
            "its netdev is in another network namespace");
  EXPECT_FALSE(vfready::pipeline::in_use(vf_bound("mlx5_core", true, Guid{1})));
  EXPECT_FALSE(vfready::pipeline::in_use(VfInfo{}));
}

TEST(TheGuidAction, FollowsFromTheBindingTheGuidInUseAndThePath) {
  VfTarget t;
  t.guid = Guid{0x42};
  using vfready::pipeline::guid_action;
  EXPECT_EQ(guid_action(t, VfInfo{}, GuidPath::kOfedSysfs), GuidAction::kSetAndProbe);
  EXPECT_EQ(guid_action(t, vf_bound("mlx5_core", true, Guid{0x42}), GuidPath::kOfedSysfs),
            GuidAction::kKeep);
  EXPECT_EQ(guid_action(t, vf_bound("mlx5_core", true, Guid{7}), GuidPath::kOfedSysfs),
            GuidAction::kSetAndRebind);
  EXPECT_EQ(guid_action(t, vf_bound("mlx5_core", false, Guid{7}), GuidPath::kOfedSysfs),
            GuidAction::kConflict);
  EXPECT_EQ(guid_action(t, vf_bound("vfio-pci", false, Guid{7}), GuidPath::kOfedSysfs),
            GuidAction::kInUse);
  // On the netlink path the VF's RDMA device tells its GUID: a wrong one is set again.
  EXPECT_EQ(guid_action(t, vf_bound("mlx5_core", true, Guid{7}), GuidPath::kNetlink),
            GuidAction::kSetAndRebind);
  EXPECT_EQ(guid_action(t, vf_bound("mlx5_core", true, Guid{0}), GuidPath::kNetlink),
            GuidAction::kSetAndRebind);
  VfInfo unreadable = vf_bound("mlx5_core", true, Guid{7});
  unreadable.effective_guid.reset();
  EXPECT_EQ(guid_action(t, unreadable, GuidPath::kNetlink), GuidAction::kKeep);
}

TEST(TheGuidPath, IsOfedSysfsThenNetlinkThenNone) {
  vfready::model::PfInfo info;
  EXPECT_EQ(vfready::pipeline::guid_path(info), GuidPath::kNone);
  info.ifindex = 3;
  EXPECT_EQ(vfready::pipeline::guid_path(info), GuidPath::kNetlink);
  info.ofed_sriov = true;
  EXPECT_EQ(vfready::pipeline::guid_path(info), GuidPath::kOfedSysfs);
}

TEST_F(AStep, VfCountIsDoneWithoutAWriteWhenTheCountIsRight) {
  host.create_vfs(kPf, 4);
  auto& r = run();
  AutoprobeGuard autoprobe(host, planned.pci, true);
  EXPECT_TRUE(vfready::pipeline::drive(vfready::pipeline::ensure_vf_count(r, autoprobe)).is_done());
  EXPECT_THAT(host.calls(), IsEmpty());
}

TEST_F(AStep, VfCountCreatesUnboundVfsAndKnowsWhereTheyAre) {
  auto& r = run();
  AutoprobeGuard autoprobe(host, planned.pci, true);
  ASSERT_TRUE(vfready::pipeline::drive(vfready::pipeline::ensure_vf_count(r, autoprobe)).is_done());
  EXPECT_TRUE(autoprobe.off());
  ASSERT_EQ(r.info.vfs.size(), 4u);
  EXPECT_EQ(r.info.vfs[3].pci.str(), "0000:18:00.4");
  EXPECT_FALSE(host.read_vf(planned.pci, 3).driver.has_value());
  EXPECT_TRUE(r.info.ofed_sriov);
}

TEST_F(AStep, VfCountFailsWithTheKernelsReasonInWords) {
  host.fail("numvfs", ERANGE);
  auto& r = run();
  AutoprobeGuard autoprobe(host, planned.pci, true);
  const auto result = vfready::pipeline::drive(vfready::pipeline::ensure_vf_count(r, autoprobe));
  ASSERT_TRUE(result.is_failed());
  EXPECT_THAT(texts(result.problems),
              ElementsAre("writing 4 to sriov_numvfs of PF 0000:18:00.0 failed "
                          "with ERANGE: it is above sriov_totalvfs"));
}

TEST_F(AStep, UdevIsDoneForAnInitializedNetdevAndWaitsOnAnother) {
  host.create_vfs(kPf, 2);
  auto& r = run();
  VfWork vs;
  vs.index = 0;
  EXPECT_TRUE(vfready::pipeline::settle_vf(r, vs, kExisting).is_done());
  EXPECT_EQ(vs.name, "ibp24s0v0");
  host.udev_initializes = false;
  ASSERT_EQ(host.unbind_vf(pci(kPf), host.pf(kPf).vfs[1].pci, "mlx5_core"), 0);
  ASSERT_EQ(host.probe_vf(pci(kPf), host.pf(kPf).vfs[1].pci), 0);
  VfWork second;
  second.index = 1;
  const auto result = vfready::pipeline::settle_vf(r, second, kNew);
  ASSERT_TRUE(result.is_waiting());
  EXPECT_EQ(result.wait_ifindex, second.ifindex);
  EXPECT_EQ(result.wait_netdev, kNew);
  EXPECT_EQ(result.waiting_on, "udev to finish with ibp24s0v1");
}

TEST_F(AStep, UdevFailsForAnUnboundVfAndCallsAPodsVfInUse) {
  host.create_vfs(kPf, 2);
  ASSERT_EQ(host.unbind_vf(pci(kPf), host.pf(kPf).vfs[0].pci, "mlx5_core"), 0);
  host.move_to_pod(kPf, 1);
  auto& r = run();
  VfWork unbound;
  unbound.index = 0;
  unbound.pci = vfready::model::PciAddress::parse("0000:18:00.1").value();
  const auto result = vfready::pipeline::settle_vf(r, unbound, kNew);
  ASSERT_TRUE(result.is_failed());
  EXPECT_THAT(texts(result.problems), ElementsAre(AllOf(HasSubstr("VF 0000:18:00.1 has no netdev"),
                                                        HasSubstr("it is not bound"))));
  VfWork pod;
  pod.index = 1;
  EXPECT_TRUE(vfready::pipeline::settle_vf(r, pod, kExisting).is_done());
  EXPECT_EQ(pod.in_use.why, vfready::model::VfUse::Why::kNetdevElsewhere);
}

// The PF's planned name, altnames and MTU are read back as a VF's are: a PF whose naming
// did not happen (no helper could start) is not ready with the kernel's name.
TEST_F(AStep, ValidateFailsAPfThatDoesNotCarryItsPlannedName) {
  auto& r = run();
  ASSERT_TRUE(planned.name);
  const auto result = vfready::pipeline::drive(vfready::pipeline::validate_pf(r));
  ASSERT_TRUE(result.is_failed());
  ASSERT_EQ(result.problems.size(), 1U);
  EXPECT_EQ(result.problems[0].kind, vfready::model::EventKind::kNameMismatch);
  // (this host's PF has no link to look up: "could not be looked up ... not ready")
  EXPECT_THAT(result.problems[0].text, HasSubstr("PF 0000:18:00.0"));
  planned.name.reset();  // nothing planned: nothing to prove
  planned.altnames.clear();
  planned.mtu.reset();
  EXPECT_TRUE(vfready::pipeline::drive(vfready::pipeline::validate_pf(r)).is_done());
}

TEST_F(AStep, PortWaitsUntilActiveLookingAgainLater) {
  host.pf(kPf).info.ports.front().state = "3: ARMED";
  auto& r = run();
  planned.name.reset();  // the PF's naming is not this test's: it keeps the host's name
  planned.altnames.clear();
  planned.mtu.reset();
  ASSERT_TRUE(vfready::pipeline::drive(vfready::pipeline::validate_pf(r)).is_done());
  EXPECT_EQ(r.status.port_state, "3: ARMED");
  // Not ACTIVE within its bound: the port was looked at again, each kPortLookEvery.
  const auto reads = host.port_reads;
  const auto bound = vfready::host::Clock::now() + 3 * vfready::pipeline::kPortLookEvery;
  const auto late =
      vfready::testing::drive_on_skipped_time(vfready::pipeline::await_port_active(r, bound));
  ASSERT_TRUE(late.is_failed());
  EXPECT_THAT(texts(late.problems), ElementsAre(HasSubstr("is \"3: ARMED\", not ACTIVE")));
  EXPECT_GE(host.port_reads - reads, 2U);
  host.pf(kPf).info.ports.front().state = "4: ACTIVE";
  const auto later = vfready::host::Clock::now() + std::chrono::seconds(5);
  EXPECT_TRUE(
      vfready::testing::drive_on_skipped_time(vfready::pipeline::await_port_active(r, later))
          .is_done());
  EXPECT_EQ(r.status.port_state, "4: ACTIVE");
}

// The daemon's host read leaves a managed PF's port state to its pass: step "hardware"
// reads port 1 itself, and judges what the driver answers (a failed query fails the PF
// before anything is written), not a read its helper did not make.
TEST_F(AStep, HardwareReadsThePortStateTheHostReadLeftToIt) {
  const auto pass = [&](int err) {
    planned = target();
    auto& port = info.functions.front().ports.front();
    port.state.clear();
    port.state_unread = true;
    host.port_read_err = err;
    steps.clear();
    return bring_up_planned();
  };
  const auto eio = pass(EIO);
  EXPECT_EQ(eio.state, vfready::model::PfState::kFailed);
  EXPECT_THAT(texts(eio.problems), Contains(HasSubstr("the driver cannot query the port")));
  EXPECT_TRUE(host.pf(kPf).info.vfs.empty()) << "a VF made before the port was judged";
  const auto gone = pass(vfready::host::kHelperGone);
  EXPECT_THAT(texts(gone.problems), Not(Contains(HasSubstr("the driver cannot query the port"))));
  const auto before = host.port_reads;
  const auto read = pass(0);
  EXPECT_GT(host.port_reads, before);
  EXPECT_EQ(read.state, vfready::model::PfState::kReady);
  EXPECT_EQ(read.port_state, host.pf(kPf).info.ports.front().state);
}

TEST_F(AStep, ValidateFailsForAPfThatVanished) {
  auto& r = run();
  planned.pci = vfready::model::PciAddress::parse("0000:77:00.0").value();
  const auto result = vfready::pipeline::drive(vfready::pipeline::validate_pf(r));
  ASSERT_TRUE(result.is_failed());
  EXPECT_THAT(texts(result.problems), ElementsAre("PF 0000:77:00.0 vanished"));
}

TEST_F(AStep, ValidateFailsForAPfWhosePortCannotBeRead) {
  host.port_read_err = EIO;
  auto& r = run();
  const auto result = vfready::pipeline::drive(vfready::pipeline::validate_pf(r));
  ASSERT_TRUE(result.is_failed());
  ASSERT_EQ(result.problems.size(), 1U);
  EXPECT_EQ(result.problems[0].kind, vfready::model::EventKind::kHostReadFailed);
  EXPECT_THAT(result.problems[0].text, HasSubstr("reading port 1 of PF " + std::string(kPf)));
  EXPECT_THAT(result.problems[0].text, HasSubstr("(EIO)"));
}

TEST_F(AStep, ValidateOfAVfTellsAWrongGuidOnTheOfedPath) {
  host.create_vfs(kPf, 4, Guid{0x0200000000000001ULL});
  auto& r = run();
  VfWork vs;
  vs.index = 2;
  vs.pci = vfready::model::PciAddress::parse("0000:18:00.3").value();
  const auto guids = vfready::pipeline::drive(vfready::pipeline::read_back_guids(r, {2}));
  ASSERT_EQ(guids.size(), 1U);
  EXPECT_FALSE(vfready::pipeline::validate_vf(r, vs, guids[0]));
  EXPECT_THAT(texts(vs.problems), ElementsAre(HasSubstr("uses GUID 02:00:00:00:00:00:00:03")));
}

TEST(RunningAStep, LooksAgainUntilItIsDone) {
  vfready::testing::MemoryHost host;
  vfready::pipeline::PfHost os{host, host, host, host};
  int looks = 0;
  const auto result = vfready::pipeline::drive(vfready::pipeline::run_until(
      os, vfready::host::Clock::now() + std::chrono::seconds(10),
      [&] {
        return ++looks < 3 ? StepResult::waiting("x", timed_out(), std::chrono::milliseconds(1))
                           : StepResult::done();
      },
      vfready::pipeline::UdevWatch{}));
  EXPECT_TRUE(result.is_done());
  EXPECT_EQ(looks, 3);
}

TEST(RunningAStep, ReportsWhatItWaitedOnWhenTheBoundPasses) {
  vfready::testing::MemoryHost host;
  vfready::pipeline::PfHost os{host, host, host, host};
  const auto result = vfready::pipeline::drive(vfready::pipeline::run_until(
      os, vfready::host::Clock::now() + std::chrono::milliseconds(20),
      [] { return StepResult::waiting("x", timed_out(), std::chrono::milliseconds(5)); },
      vfready::pipeline::UdevWatch{}));
  ASSERT_TRUE(result.is_failed());
  EXPECT_THAT(result.problems, ElementsAre(timed_out()));
}

// The daemon's end, which unwinds no pass: the guards under way turn their PFs'
// autoprobe on, once, and a guard that has gone is not in the list.
TEST_F(AStep, AutoprobeGuardsLetTheirPfsAutoprobeGoAtTheDaemonsEnd) {
  const auto pci = vfready::model::PciAddress::parse(kPf).value();
  vfready::pipeline::AutoprobeGuards guards;
  {
    AutoprobeGuard gone(host, pci, true, &guards);
    EXPECT_EQ(guards.size(), 1U);
  }
  EXPECT_EQ(guards.size(), 0U);
  AutoprobeGuard guard(host, pci, true, &guards);
  ASSERT_EQ(guard.turn_off(), 0);
  ASSERT_FALSE(host.pf(kPf).autoprobe);
  const auto before = host.calls().size();
  guards.let_go();
  EXPECT_TRUE(host.pf(kPf).autoprobe);
  EXPECT_FALSE(guard.off());
  EXPECT_EQ(host.calls().size(), before + 1);
  guards.let_go();
  EXPECT_EQ(host.calls().size(), before + 1) << "written once";
}

// A pass that ends without restore() (it threw): the guard's end turns it on.
TEST_F(AStep, AutoprobeGuardTurnsItBackOnWhenItGoes) {
  const auto pci = vfready::model::PciAddress::parse(kPf).value();
  {
    AutoprobeGuard guard(host, pci, true);
    ASSERT_EQ(guard.turn_off(), 0);
    EXPECT_FALSE(host.pf(kPf).autoprobe);
  }
  EXPECT_TRUE(host.pf(kPf).autoprobe);
  host.pf(kPf).autoprobe = false;
  { AutoprobeGuard found_off(host, pci, false); }
  EXPECT_TRUE(host.pf(kPf).autoprobe);
  const auto before = host.calls().size();
  { AutoprobeGuard found_on(host, pci, true); }
  EXPECT_EQ(host.calls().size(), before);  // on already: not written
}
