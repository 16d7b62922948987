// SPDX-License-Identifier: Apache-2.0
// Step "udev": a VF's netdev is here and udev is done with it; and how a step that
// waits is run until it is done.
#include <algorithm>
#include <thread>

#include "vfready/pipeline/steps.hpp"

namespace vfready::pipeline {

StepResult settle_vf(PfRun& run, VfWork& vs, host::UdevWait::Netdev netdev) {
  if (vs.in_use) {
    return StepResult::done();
  }
  auto& os = run.os;
  if (vs.ifindex == 0) {
    // The netdev's name from sysfs, its ifindex from netlink. Should it be renamed in
    // between (udev, someone), sysfs is asked again.
    auto binding = os.reads.vf_binding(run.target.pci, vs.index);
    std::optional<host::Link> link;
    for (int tries = 0; tries < 3 && binding.netdev && !(link = os.links.by_name(*binding.netdev));
         ++tries) {
      binding = os.reads.vf_binding(run.target.pci, vs.index);
    }
    if (!binding.netdev && binding.driver) {
      // Bound (the probe made its netdev), but the netdev is not here: a pod has it.
      vs.in_use = {model::VfUse::Why::kNetdevElsewhere, {}};
      return StepResult::done();
    }
    if (!binding.netdev || !link) {
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
    vs.ifindex = link->ifindex;
    vs.name = link->name;
  }
  if (os.udev.wait_initialized(vs.ifindex, netdev, std::chrono::steady_clock::now())) {
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

StepResult run_until(PfHost& os, std::chrono::steady_clock::time_point deadline,
                     const std::function<StepResult()>& step) {
  using Clock = std::chrono::steady_clock;
  for (;;) {
    auto result = step();
    if (!result.is_waiting()) {
      return result;
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      return StepResult::failed(result.on_timeout);
    }
    if (result.wait_ifindex != 0) {
      // Its answer is the step's next look.
      os.udev.wait_initialized(result.wait_ifindex, result.wait_netdev, deadline);
    } else {
      // What sends no event (a port's state) is looked at again after a while.
      std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(result.retry, deadline - now));
    }
  }
}

}  // namespace vfready::pipeline
