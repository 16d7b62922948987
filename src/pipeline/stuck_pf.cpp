// SPDX-License-Identifier: Apache-2.0
// A PF whose driver did not return from a call: one problem that says which call.
#include <algorithm>

#include "vfready/pipeline/steps.hpp"

namespace vfready::pipeline {

model::Problem stuck_problem(PfRun& run) {
  const auto& pf = run.target.pci;
  std::string call = run.info.stuck.value_or("a call into its driver");
  std::string waited;
  const auto stuck = run.os.calls.stuck(pf);
  if (stuck) {
    call = stuck->call;
    waited = " within " + std::to_string(stuck->deadline.count()) + " ms";
  }
  const std::string why =
      stuck && stuck->untaken
          ? " was not taken up by a helper process" + waited +
                " (vfready-spawn, which forks them, made none: is it stopped?); vfreadyd forks "
                "its helpers itself from now on, and the PF is left alone until the call is "
                "made and returns"
          : " did not return" + waited +
                "; a helper process (vfready-call) waits for it, and the PF is left alone "
                "until it returns. A driver holding it shows in the kernel log (a hung task "
                "after 120 s), and the helper in state D (ps -o pid,stat,wchan:32 -C "
                "vfready-call); a helper in "
                "state T was stopped by someone (SIGSTOP): kill -CONT it";
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
