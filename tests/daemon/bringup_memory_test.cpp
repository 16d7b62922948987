// SPDX-License-Identifier: Apache-2.0
// Whole passes of the daemon's Bringup, driven by its event loop, on MemoryHost: the
// planner, every PF's pass driven by the loop and the loop's bookkeeping, without root or a
// fake host.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "bringup.hpp"
#include "memory_host_access.hpp"
#include "vfready/model/config.hpp"
#include "vfready/model/plan.hpp"

namespace vfready::daemon {
namespace {

using testing::kPf0;
using testing::kPf1;
using testing::MemoryHost;
using testing::MemoryHostAccess;

class ABringupOnMemory : public ::testing::Test {
 protected:
  void SetUp() override { testing::add_two_pfs(*host); }

  BringupInputs inputs(const std::string& json) {
    auto config = model::parse_config({{"vfready.json", json}});
    EXPECT_TRUE(config) << config.error().message;
    BringupInputs in{config.value(), {}, {}};
    in.host_access = std::make_shared<MemoryHostAccess>(host);
    return in;
  }

  // One pass, run by the loop until its outcome (bounded: a pass that never ends fails
  // the test instead of hanging it).
  // `on_change`: called at each change of the status, on the loop (a test's move).
  std::shared_ptr<Bringup> pass(BringupInputs in, std::set<std::string> only = {},
                                const std::function<void()>& on_change = {}) {
    EventLoop loop;
    BringupHooks hooks;
    hooks.changed = [this, &on_change] {
      ++changes;
      if (on_change) {
        on_change();
      }
    };
    hooks.progress = [this](const std::string& line, std::chrono::milliseconds /*bound*/) {
      lines.push_back(line);
    };
    hooks.finished = [&loop] { loop.quit(0); };
    auto bringup = std::make_shared<Bringup>(std::move(in), status, Clock::now(), names,
                                             std::move(hooks), std::move(only));
    bringup->start();
    loop.add(bringup);
    loop.add_timer(Clock::now() + std::chrono::seconds(20), [&loop] { loop.quit(2); });
    EXPECT_EQ(loop.run(), 0) << "the pass did not end within 20 s";
    return bringup;
  }

  static std::string config(int vfs) { return testing::two_pf_config(vfs); }

  std::shared_ptr<MemoryHost> host = std::make_shared<MemoryHost>();
  model::DaemonStatus status;
  std::shared_ptr<pipeline::NameRegistry> names = std::make_shared<pipeline::NameRegistry>();
  int changes = 0;
  std::vector<std::string> lines;
};

TEST_F(ABringupOnMemory, BringsEveryPfUpAndReportsEachVf) {
  auto in = inputs(config(4));
  const auto plan = model::make_plan(in.config, host->host_info()).value();
  const auto bringup = pass(std::move(in));
  EXPECT_EQ(bringup->outcome(), model::Outcome::kReady);
  ASSERT_EQ(status.pfs.size(), 2U);
  for (std::size_t p = 0; p < 2; ++p) {
    const auto& pf = status.pfs[p];
    EXPECT_EQ(pf.state, model::PfState::kReady) << pf.pci.str();
    EXPECT_EQ(pf.name, "ibs" + std::to_string(p));
    ASSERT_EQ(pf.vfs.size(), 4U);
    for (const auto& vf : pf.vfs) {
      EXPECT_EQ(vf.name, "ibs" + std::to_string(p) + "v" + std::to_string(vf.index));
      EXPECT_EQ(vf.guid, plan.pfs[p].vf.at(vf.index).guid);
    }
    // Every step the pass ran is in the PF's record, done.
    ASSERT_FALSE(pf.steps.empty());
    EXPECT_EQ(pf.steps.back().state, model::StepState::kDone);
  }
  EXPECT_EQ(status.state, model::DaemonState::kReady);
  EXPECT_EQ(status.changes.vfs_created, 8U);
  EXPECT_GT(changes, 0);
}

TEST_F(ABringupOnMemory, APfWaitingForItsProbeHoldsNoOtherPfOnTheLoop) {
  // PF 0's first probe does not answer until PF 1 is ready: the loop drives both, so
  // PF 1 must get there while PF 0 waits.
  host->hold_probes_of(kPf0);
  bool pf1_ready_while_pf0_held = false;
  const std::function<void()> on_change = [&] {
    if (status.pfs.size() == 2 && status.pfs[1].state == model::PfState::kReady &&
        host->held_probes() > 0) {
      pf1_ready_while_pf0_held = status.pfs[0].state == model::PfState::kPending;
      host->stop_holding();
    }
  };
  const auto bringup = pass(inputs(config(4)), {}, on_change);
  ASSERT_TRUE(bringup->finished()) << "the pass did not end within 20 s";
  EXPECT_TRUE(pf1_ready_while_pf0_held);
  EXPECT_EQ(bringup->outcome(), model::Outcome::kReady);
  EXPECT_EQ(status.pfs[0].state, model::PfState::kReady);
}

TEST_F(ABringupOnMemory, APfWhosePassThrowsFailsAloneWithAnInternalErrorAutoprobeOn) {
  // PF 0's write of sriov_numvfs throws (autoprobe is off for it then) while PF 1's
  // first probe is held: PF 1 goes on once PF 0 has failed.
  host->numvfs_throws.insert(kPf0);
  host->hold_probes_of(kPf1);
  // (Whether PF 1's probe is held yet when PF 0 fails is the loop's timing: PF 1 is
  // pending either way, as no probe of it has answered.)
  bool pf0_failed = false;
  bool pf1_pending_when_pf0_failed = false;
  const std::function<void()> on_change = [&] {
    if (!pf0_failed && status.pfs.size() == 2 && status.pfs[0].state == model::PfState::kFailed) {
      pf0_failed = true;
      pf1_pending_when_pf0_failed = status.pfs[1].state == model::PfState::kPending;
      host->stop_holding();
    }
  };
  const auto bringup = pass(inputs(config(4)), {}, on_change);
  ASSERT_TRUE(bringup->finished()) << "the pass did not end within 20 s";
  EXPECT_TRUE(pf1_pending_when_pf0_failed);
  EXPECT_EQ(bringup->outcome(), model::Outcome::kDegraded);
  EXPECT_EQ(status.pfs[1].state, model::PfState::kReady);
  ASSERT_EQ(status.pfs[0].problems.size(), 1U);
  EXPECT_EQ(status.pfs[0].problems[0].kind, model::EventKind::kInternalError);
  EXPECT_NE(status.pfs[0].problems[0].text.find("threw"), std::string::npos);
  EXPECT_TRUE(host->pf(kPf0).autoprobe) << "turned back on as its pass unwound";
}

TEST_F(ABringupOnMemory, APfWhosePassThrowsAsItIsResumedFailsWithAnInternalError) {
  // PF 0's probes are held until PF 1 is ready, then answer by throwing: the loop meets
  // the exception as it resumes PF 0's pass, not as it starts it.
  host->hold_probes_of(kPf0);
  host->probes_throw.insert(kPf0);
  const std::function<void()> on_change = [&] {
    if (status.pfs.size() == 2 && status.pfs[1].state == model::PfState::kReady) {
      host->stop_holding();
    }
  };
  const auto bringup = pass(inputs(config(4)), {}, on_change);
  ASSERT_TRUE(bringup->finished()) << "the pass did not end within 20 s";
  EXPECT_EQ(bringup->outcome(), model::Outcome::kDegraded);
  ASSERT_EQ(status.pfs.size(), 2U);
  EXPECT_EQ(status.pfs[1].state, model::PfState::kReady);
  EXPECT_EQ(status.pfs[0].state, model::PfState::kFailed);
  ASSERT_EQ(status.pfs[0].problems.size(), 1U);
  EXPECT_EQ(status.pfs[0].problems[0].kind, model::EventKind::kInternalError);
  EXPECT_NE(status.pfs[0].problems[0].text.find("threw"), std::string::npos)
      << status.pfs[0].problems[0].text;
}

TEST_F(ABringupOnMemory, AVfThatFailsItsProbeFailsItsPfAlone) {
  host->probe_fails.insert(host->pf(kPf1).info.vf_address(2)->str());
  const auto bringup = pass(inputs(config(4)));
  EXPECT_EQ(bringup->outcome(), model::Outcome::kDegraded);
  ASSERT_EQ(status.pfs.size(), 2U);
  EXPECT_EQ(status.pfs[0].state, model::PfState::kReady);
  EXPECT_EQ(status.pfs[1].state, model::PfState::kFailed);
  const auto& vf = status.pfs[1].vfs.at(2);
  ASSERT_EQ(vf.problems.size(), 1U);
  EXPECT_EQ(vf.problems[0].kind, model::EventKind::kVfProbeFailed);
}

TEST_F(ABringupOnMemory, AHungDriverCallLeavesItsPfStuckAndThePassEnds) {
  // The first write of sriov_numvfs does not return: that PF is stuck, the call named.
  host->fail("numvfs", host::kStuck);
  auto in = inputs(R"({"pfs": [{"select": {"pci": ["0000:18:00.0"]}, "vfs": 4}]})");
  const auto bringup = pass(std::move(in));
  EXPECT_EQ(bringup->outcome(), model::Outcome::kFailed);
  ASSERT_EQ(status.pfs.size(), 1U);
  EXPECT_EQ(status.pfs[0].state, model::PfState::kStuck);
  ASSERT_EQ(status.pfs[0].problems.size(), 1U);
  EXPECT_EQ(status.pfs[0].problems[0].kind, model::EventKind::kPfStuck);
  EXPECT_NE(status.pfs[0].problems[0].text.find("numvfs"), std::string::npos)
      << status.pfs[0].problems[0].text;
}

TEST_F(ABringupOnMemory, AReconcileOfOnePfLeavesTheOthersReport) {
  pass(inputs(config(2)));
  ASSERT_EQ(status.state, model::DaemonState::kReady);
  const auto before = status.pfs[0];
  // Drift on the second PF: its VF 1's netdev is renamed away; a pass over that PF only.
  const int ifindex = status.pfs[1].vfs.at(1).ifindex;
  ASSERT_EQ(host->rename(ifindex, "drifted"), 0);
  pass(inputs(config(2)), {kPf1});
  EXPECT_EQ(status.state, model::DaemonState::kReady);
  EXPECT_EQ(status.pfs[1].vfs.at(1).name, "ibs1v1");
  EXPECT_EQ(status.pfs[0].steps.size(), before.steps.size());  // not run again
  EXPECT_EQ(status.pfs[1].changes.vfs_created, 0U);
  EXPECT_EQ(status.pfs[1].changes.links_renamed, 1U);
}

}  // namespace
}  // namespace vfready::daemon
