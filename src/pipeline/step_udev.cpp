// SPDX-License-Identifier: Apache-2.0
// Step "udev": a VF's netdev is here and udev is done with it; and how a step that
// waits is run until it is done.
#include <unistd.h>

#include <algorithm>

#include "vfready/pipeline/steps.hpp"

namespace vfready::pipeline {

StepResult settle_vf(PfRun& run, VfWork& vs, host::UdevWait::Netdev netdev) {
  if (vs.in_use) {
    return StepResult::done();
  }
  auto& os = run.os;
  if (vs.ifindex == 0) {
    // The netdev's name and ifindex from sysfs. Should it be renamed between the two
    // reads (udev, someone), sysfs is asked again.
    auto binding = os.reads.vf_binding(run.target.pci, vs.index);
    for (int tries = 0; tries < 3 && binding.netdev && binding.ifindex == 0; ++tries) {
      binding = os.reads.vf_binding(run.target.pci, vs.index);
    }
    if (!binding.netdev && binding.driver) {
      // Bound (the probe made its netdev), but the netdev is not here: a pod has it.
      vs.in_use = {model::VfUse::Why::kNetdevElsewhere, {}};
      return StepResult::done();
    }
    if (!binding.netdev || binding.ifindex == 0) {
      if (!vs.problems.empty()) {
        // Its problem (a failed probe, a GUID not set) says why already.
        return StepResult::failed(std::vector<model::Problem>{});
      }
      return StepResult::failed(model::problem(
          model::EventKind::kVfNoNetdev,
          "VF " + vs.pci.str() + " has no netdev" +
              (binding.driver || binding.netdev ? std::string()
                                                : ": it is not bound (its probe failed?)") +
              "; see the kernel log",
          run.status.pci.str(), vs.pci.str()));
    }
    vs.ifindex = binding.ifindex;
    vs.name = *binding.netdev;
  }
  // A netdev that was there before the pass may have been initialized long ago: asked.
  if (os.udev.initialized_now(vs.ifindex, netdev, netdev == host::UdevWait::Netdev::kExisting)) {
    return StepResult::done();
  }
  const auto bound = std::to_string(run.config.timeouts.udev_ms);
  return StepResult::waiting_for_udev(
      "udev to finish with " + vs.name,
      model::problem(model::EventKind::kUdevTimeout,
                     "udev did not finish with " + vs.name + " (ifindex " +
                         std::to_string(vs.ifindex) + ") within " + bound + " ms",
                     run.status.pci.str(), vs.pci.str()),
      vs.ifindex, netdev);
}

Task<StepResult> run_until(PfHost& os, host::Clock::time_point deadline,
                           std::function<StepResult()> step, UdevWatch watch) {
  using Clock = host::Clock;
  auto ask_at = Clock::time_point::min();
  if (watch.fd >= 0) {
    // Before the first look: an event that comes between it and the wait still wakes it.
    os.udev.watch(watch.fd, watch.pci);
  }
  for (;;) {
    auto result = step();
    if (!result.is_waiting()) {
      co_return result;
    }
    auto now = Clock::now();
    if (now >= deadline) {
      co_return StepResult::failed(result.on_timeout);
    }
    if (result.wait_ifindex == 0) {
      // What sends no event (a port's state) is looked at again after a while.
      co_await Wait::time(std::min<Clock::time_point>(deadline, now + result.retry));
      continue;
    }
    if (ask_at == Clock::time_point::min()) {
      ask_at = std::min(deadline, now + kAskLibudevAfter);
      if (watch.fd >= 0) {
        os.udev.watch_netdev(watch.fd, watch.pci, result.wait_ifindex);
      }
    }
    co_await Wait::fd_or_time(watch.fd, ask_at);
    if (watch.fd >= 0) {
      uint64_t count = 0;  // heard, or a bound: the step looks again either way
      static_cast<void>(::read(watch.fd, &count, sizeof count));
      std::vector<model::PciAddress> woken;
      static_cast<void>(os.udev.take_woken(watch.fd, &woken));
    }
    if (Clock::now() >= ask_at) {
      // After a second and at the deadline: the step's next look finds the netdev
      // initialized when libudev says so.
      ask_at = deadline;
      static_cast<void>(os.udev.initialized_now(result.wait_ifindex, result.wait_netdev, true));
    }
  }
}

}  // namespace vfready::pipeline
