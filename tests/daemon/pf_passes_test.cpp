// SPDX-License-Identifier: Apache-2.0
// PfPasses on MemoryHost, without root: every PF's pass a task driven through one epoll
// set, the hooks told of each step and end, and the daemon's end turning autoprobe on
// again on a PF whose pass is making its VFs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "memory_host_access.hpp"
#include "pf_passes.hpp"
#include "vfready/model/config.hpp"
#include "vfready/model/plan.hpp"
#include "vfready/pipeline/name_registry.hpp"

namespace vfready::daemon {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using vfready::testing::kPf0;
using vfready::testing::kPf1;
using vfready::testing::MemoryHost;
using vfready::testing::MemoryHostAccess;

class APfPasses : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::add_two_pfs(*host);
    auto config = model::parse_config({{"vfready.json", testing::two_pf_config(2)}});
    ASSERT_TRUE(config) << config.error().message;
    in.config = config.value();
    in.host_access = std::make_shared<MemoryHostAccess>(host);
    info = std::make_shared<const model::HostInfo>(host->host_info());
    auto plan = model::make_plan(in.config, *info);
    ASSERT_TRUE(plan) << plan.error().message;
    targets = plan->pfs;
    ASSERT_EQ(targets.size(), 2U);
  }
  void TearDown() override { ::close(planner_fd); }

  void start() {
    std::vector<PassPf> pfs;
    for (std::size_t i = 0; i < targets.size(); ++i) {
      pfs.push_back({i, &targets[i]});
    }
    passes.start(std::move(pfs), in, info, in.host_access->listen(in), names);
  }

  // Turns the passes as the loop does (waiting on their set up to their earliest bound)
  // until `done` holds or `bound` has passed: false then.
  bool turn_until(const std::function<bool()>& done, std::chrono::milliseconds bound) {
    const auto until = Clock::now() + bound;
    while (!done()) {
      const auto now = Clock::now();
      if (now >= until) {
        return false;
      }
      auto wait = until - now;
      if (const auto next = passes.until()) {
        wait = std::min(wait, std::max(*next - now, Clock::duration::zero()));
      }
      pollfd p{passes.fd(), POLLIN, 0};
      static_cast<void>(::poll(
          &p, 1, static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(wait).count())));
      static_cast<void>(passes.turn());
    }
    return true;
  }

  std::shared_ptr<MemoryHost> host = std::make_shared<MemoryHost>();
  BringupInputs in;
  std::shared_ptr<const model::HostInfo> info;
  std::vector<model::PfTarget> targets;
  std::shared_ptr<pipeline::NameRegistry> names = std::make_shared<pipeline::NameRegistry>();
  std::map<std::size_t, model::PfStatus> done;
  std::vector<std::pair<std::size_t, std::string>> steps;
  int planner_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  PfPasses passes{
      {.step = [this](std::size_t pf, const char* step) { steps.emplace_back(pf, step); },
       .done = [this](std::size_t pf, model::PfStatus s) { done[pf] = std::move(s); }},
      planner_fd};
};

TEST_F(APfPasses, BringsEachPfUpAndTellsItsStepsAndItsEnd) {
  start();
  ASSERT_TRUE(turn_until([&] { return done.size() == 2; }, std::chrono::seconds(20)));
  for (std::size_t pf = 0; pf < 2; ++pf) {
    EXPECT_EQ(done.at(pf).state, model::PfState::kReady) << pf;
    EXPECT_EQ(done.at(pf).vfs.size(), 2U) << pf;
    EXPECT_THAT(steps, Contains(std::pair<std::size_t, std::string>(pf, "validate"))) << pf;
  }
  EXPECT_FALSE(passes.until().has_value()) << "no pass waits once all have ended";
}

// The daemon ends by _exit and unwinds no pass: each PF whose VFs a pass is making (its
// autoprobe off, its sriov_numvfs write under way) gets autoprobe on again through
// let_autoprobe_go(), once.
TEST_F(APfPasses, TurnAutoprobeOnAgainForAPassMakingItsVfsAtTheDaemonsEnd) {
  host->hold_numvfs = true;
  start();
  ASSERT_TRUE(turn_until([&] { return host->held_probes() == 2; }, std::chrono::seconds(5)));
  EXPECT_FALSE(host->pf(kPf0).autoprobe);
  EXPECT_FALSE(host->pf(kPf1).autoprobe);
  passes.let_autoprobe_go();
  EXPECT_TRUE(host->pf(kPf0).autoprobe);
  EXPECT_TRUE(host->pf(kPf1).autoprobe);
  const auto writes = [&] {
    const auto calls = host->calls();
    return std::count_if(calls.begin(), calls.end(), [](const std::string& c) {
      return c.starts_with("autoprobe ") && c.ends_with(" 1");
    });
  };
  EXPECT_EQ(writes(), 2);
  passes.let_autoprobe_go();
  EXPECT_EQ(writes(), 2) << "each written once";
}

// A PF's pass that throws as it starts ends at once with an internal error; the other
// goes on.
TEST_F(APfPasses, EndsAPassThatThrowsWithAnInternalErrorAndRunsTheOther) {
  host->numvfs_throws.insert(kPf0);
  start();
  ASSERT_TRUE(turn_until([&] { return done.size() == 2; }, std::chrono::seconds(20)));
  EXPECT_EQ(done.at(0).state, model::PfState::kFailed);
  ASSERT_FALSE(done.at(0).problems.empty());
  EXPECT_EQ(done.at(0).problems[0].kind, model::EventKind::kInternalError);
  EXPECT_THAT(done.at(0).problems[0].text, HasSubstr("threw"));
  EXPECT_EQ(done.at(1).state, model::PfState::kReady);
  EXPECT_TRUE(host->pf(kPf0).autoprobe) << "the guard's end turned it on again";
}

}  // namespace
}  // namespace vfready::daemon
