// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>

#include "vfready/model/compat_table.hpp"
#include "vfready/model/config.hpp"
#include "vfready/model/inventory.hpp"
#include "vfready/model/plan.hpp"
#include "vfready/model/status.hpp"
#include "vfready/pipeline/name_registry.hpp"
#include "vfready/pipeline/pf_host.hpp"
#include "vfready/pipeline/task.hpp"

// Bringing one PF to its target: the steps of steps.hpp in order, as a task its driver
// resumes (the daemon's loop, or drive() in tests), every call into the driver started
// and awaited. A VF that is probed goes through udev, naming and its read-back as soon
// as its probe ends, while the next VF probes: a PF's probes are its critical path.
namespace vfready::pipeline {

struct StepNames {
  static constexpr const char* kHardware = "hardware";
  static constexpr const char* kVfs = "vfs";
  static constexpr const char* kGuids = "guids";
  static constexpr const char* kUdev = "udev";
  static constexpr const char* kNames = "names";
  static constexpr const char* kValidate = "validate";
};

// Called as each step starts (from the task, on its driver's thread).
using ProgressFn = std::function<void(const char* step)>;

// `host` is the host as the pass read it before any PF's pass started. A task: it
// waits (udev, probes, the port) as its driver lets it.
Task<model::PfStatus> pf_pass(const model::PfTarget& target, const model::Config& config,
                              const model::CompatTable& table, const model::HostInfo& host,
                              PfHost& os, NameRegistry& names, const ProgressFn& progress);

}  // namespace vfready::pipeline
