// SPDX-License-Identifier: Apache-2.0
// A PF whose driver did not return from a call: one problem that says which call.
#include <algorithm>
#include <string>

#include "vfready/pipeline/steps.hpp"

namespace vfready::pipeline {

namespace {

// Why a call that did not return has not, as far as its helper process tells.
std::string why_not_returned(const host::StuckCall& stuck, const std::string& waited) {
  if (stuck.untaken) {
    return " was not taken up by a helper process" + waited +
           " (vfready-spawn, which forks them, made none: is it stopped?); vfreadyd forks "
           "its helpers itself from now on, and the PF is left alone until the call is made "
           "and returns";
  }
  const auto pid = std::to_string(stuck.helper_pid);
  if (stuck.helper_state == 't') {
    return " did not return" + waited + ": its helper process (vfready-call, pid " + pid +
           ") is held by a debugger (state t, a tracing stop), not by the driver; the "
           "call answers once the debugger lets it go, and the PF is left alone until it does";
  }
  if (stuck.helper_state == 'T') {
    return " did not return" + waited + ": its helper process (vfready-call, pid " + pid +
           ") is stopped (state T: sent SIGSTOP or another stop signal), not held by the "
           "driver; kill -CONT " +
           pid + " lets it answer, and the PF is left alone until it does";
  }
  const std::string helper =
      stuck.helper_pid > 0
          ? "its helper process (vfready-call, pid " + pid + ", state " +
                (stuck.helper_state != 0 ? std::string(1, stuck.helper_state) : "?") + ")"
          : "a helper process (vfready-call)";
  return " did not return" + waited + "; " + helper +
         " waits for it in the kernel, and the PF is left alone until it returns. A driver "
         "holding it shows in the kernel log (a hung task after 120 s), and its helper in "
         "state D (ps -o pid,stat,wchan:32 -C vfready-call)";
}

}  // namespace

model::Problem stuck_problem(PfRun& run) {
  const auto& pf = run.target.pci;
  std::string call = run.info.stuck.value_or("a call into its driver");
  std::string why = why_not_returned(host::StuckCall{}, "");
  if (const auto stuck = run.os.calls.stuck(pf)) {
    call = stuck->call;
    why = why_not_returned(*stuck, " within " + std::to_string(stuck->deadline.count()) + " ms");
  }
  return model::problem(model::EventKind::kPfStuck, "PF " + pf.str() + " is stuck: " + call + why,
                        pf.str());
}

void settle_stuck(PfRun& run) {
  auto& status = run.status;
  const auto stuck = [](const model::Problem& p) { return p.kind == model::EventKind::kPfStuck; };
  const bool any = run.os.calls.stuck(run.target.pci).has_value() ||
                   std::any_of(status.problems.begin(), status.problems.end(), stuck) ||
                   std::any_of(status.vfs.begin(), status.vfs.end(), [&](const auto& vf) {
                     return std::any_of(vf.problems.begin(), vf.problems.end(), stuck);
                   });
  if (!any) {
    return;
  }
  std::erase_if(status.problems, stuck);
  for (auto& vf : status.vfs) {
    // The call that did not return was this VF's: it was not judged.
    if (std::erase_if(vf.problems, stuck) > 0) {
      vf.checked = false;
    }
  }
  status.problems.insert(status.problems.begin(), stuck_problem(run));
  status.state = model::PfState::kStuck;
}

}  // namespace vfready::pipeline
