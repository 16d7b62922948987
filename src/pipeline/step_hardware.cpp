// SPDX-License-Identifier: Apache-2.0
// Step "hardware": the PF as the pass found it, judged before anything is written.
#include <algorithm>

#include "vfready/pipeline/steps.hpp"

namespace vfready::pipeline {

StepResult check_hardware(PfRun& run, const model::CompatTable& table,
                          const model::HostInfo& host) {
  const auto& target = run.target;
  const auto found = std::find_if(host.functions.begin(), host.functions.end(),
                                  [&](const model::PfInfo& f) { return f.pci == target.pci; });
  const model::PfInfo* seen = found == host.functions.end() ? nullptr : &*found;
  if (seen != nullptr) {
    run.info = *seen;
    run.status.name = seen->netdev.value_or("");
    run.status.ifindex = seen->ifindex;
    run.status.link_layer = seen->link_layer();
    // As read: a PF that fails in a later step still shows its port (validation reads it
    // again).
    run.status.port_state = seen->ports.empty() ? "" : seen->ports.front().state;
  }
  if ((seen != nullptr && seen->stuck) || run.os.calls.stuck(target.pci)) {
    return StepResult::failed(stuck_problem(run));  // nothing read of it can be trusted
  }
  if (!target.problems.empty()) {
    return StepResult::failed(target.problems);  // found when the plan was made
  }
  auto verdict = model::check_hardware(target, seen, run.config, table, host);
  run.status.warnings = verdict.warnings;
  if (!verdict.ok()) {
    return StepResult::failed(std::move(verdict.failures));
  }
  return StepResult::done();
}

}  // namespace vfready::pipeline
