// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

#include "pass_workers.hpp"

// The PFs of one pass, each a task (pipeline::pf_pass), driven together by one thread:
// it waits for what any of them waits on (a helper's answer, udev, a bound) and resumes
// those whose wait has come. Their steps that do not wait (reading sysfs, netlink) run
// on that thread, one PF's at a time.
namespace vfready::daemon {

// A PF of the plan the runner brings up: its place in the plan and its target.
struct RunnerPf {
  std::size_t index = 0;
  model::PfTarget target;
};

// When the runner last went on with a PF (started or resumed its pass), in
// steady_clock's ticks: a PF's step bound counts from it as well as from the step's
// start, so that a step waiting its turn behind other PFs' work is not taken for one
// held in the kernel. Written by the runner, read by the loop.
using RunnerProgress = std::atomic<std::chrono::steady_clock::rep>;

// Starts the runner's thread for `pfs` (each entered in `busy` by the caller); posts
// kStep as each PF's step starts and kDone as each ends, when its PF leaves `busy`.
void start_pf_runner(std::shared_ptr<PassChannel> channel, std::shared_ptr<BusyPfs> busy,
                     std::shared_ptr<pipeline::NameRegistry> names, std::vector<RunnerPf> pfs,
                     BringupInputs in, std::shared_ptr<const model::HostInfo> host,
                     std::shared_ptr<host::UdevWait> udev,
                     std::shared_ptr<RunnerProgress> progress);

}  // namespace vfready::daemon
