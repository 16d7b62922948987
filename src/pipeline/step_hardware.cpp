// SPDX-License-Identifier: Apache-2.0
// Step "hardware": the PF as the pass found it, judged before anything is written.
#include <algorithm>
#include <cerrno>

#include "vfready/host/errno_name.hpp"
#include "vfready/pipeline/call_answer.hpp"
#include "vfready/pipeline/steps.hpp"

namespace vfready::pipeline {

namespace {

// The host read's record of the PF, into the run; null when the read did not find it.
const model::PfInfo* take_found(PfRun& run, const model::HostInfo& host) {
  const auto found = std::find_if(host.functions.begin(), host.functions.end(),
                                  [&](const model::PfInfo& f) { return f.pci == run.target.pci; });
  if (found == host.functions.end()) {
    return nullptr;
  }
  run.info = *found;
  run.status.name = found->netdev.value_or("");
  run.status.ifindex = found->ifindex;
  run.status.link_layer = found->link_layer();
  // As read: a PF that fails in a later step still shows its port (validation reads it
  // again).
  run.status.port_state = found->ports.empty() ? "" : found->ports.front().state;
  return &*found;
}

}  // namespace

Task<Done> find_hardware(PfRun& run, const model::HostInfo& host) {
  if (take_found(run, host) == nullptr || run.info.stuck || run.info.ports.empty() ||
      !run.info.ports.front().state_unread) {
    co_return Done{};
  }
  // state_show() asks the driver (ib_query_port(); for mlx5 a firmware command): a call
  // of this PF's own, which a firmware that does not answer holds (the PF is then stuck).
  auto reading = answer(run.os.calls.start_read_port(run.target.pci));
  const auto port = co_await reading;
  auto& first = run.info.ports.front();
  first.state_unread = false;
  if (port.err == 0) {
    first.state = port.state;
  } else if (!port.unasked && port.err != host::kStuck && port.err != ENOENT &&
             port.err != ENODEV) {
    // The driver's answer. The device going away (ENOENT, ENODEV) is the pass's to find;
    // kStuck the check's; a read no helper made is left unread (validation reads the port
    // again, and a helper that died brings its PF up again).
    first.state_error = host::errno_name(port.err);
  }
  run.status.port_state = first.state;
  co_return Done{};
}

StepResult check_hardware(PfRun& run, const model::CompatTable& table,
                          const model::HostInfo& host) {
  const auto& target = run.target;
  const bool found = host.find(target.pci) != nullptr;
  if ((found && run.info.stuck) || run.os.calls.stuck(target.pci)) {
    return StepResult::failed(stuck_problem(run));  // nothing read of it can be trusted
  }
  if (!target.problems.empty()) {
    return StepResult::failed(target.problems);  // found when the plan was made
  }
  auto verdict =
      model::check_hardware(target, found ? &run.info : nullptr, run.config, table, host);
  run.status.warnings = verdict.warnings;
  if (!verdict.ok()) {
    return StepResult::failed(std::move(verdict.failures));
  }
  return StepResult::done();
}

}  // namespace vfready::pipeline
