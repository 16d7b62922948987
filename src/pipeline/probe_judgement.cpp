// SPDX-License-Identifier: Apache-2.0
// What a VF's probe did, judged (steps.hpp): bound to its PF's VF driver, or a problem
// quoting the kernel log.
#include <string>

#include "vfready/host/errno_name.hpp"
#include "vfready/pipeline/steps.hpp"

namespace vfready::pipeline {

Probe judge_probe(PfRun& run, const model::PciAddress& vf, const host::ProbedVf& probed) {
  if (probed.err == host::kStuck) {
    return {stuck_problem(run), std::nullopt};
  }
  if (probed.err != 0) {
    return {model::problem(model::EventKind::kVfProbeFailed,
                           "writing VF " + vf.str() +
                               " to drivers_probe failed: " + host::errno_name(probed.err),
                           run.target.pci.str(), vf.str()),
            std::nullopt};
  }
  const auto driver = run.info.vfs_driver();
  if (!probed.bound || (!probed.driver.empty() && probed.driver != driver)) {
    // drivers_probe said nothing (it never does): the probe failed, nothing took the VF,
    // or its driver_override named another driver.
    std::string text = "VF " + vf.str() +
                       (probed.bound ? " is bound to " + probed.driver + ", not " + driver
                                     : " is not bound to " + driver) +
                       " after its probe";
    // The latest lines: a VF probed before has older ones.
    constexpr std::size_t kLines = 3;
    auto lines = run.os.reads.kernel_log_naming(vf.str());
    if (lines.size() > kLines) {
      lines.erase(lines.begin(), lines.end() - kLines);
    }
    if (lines.empty()) {
      text += "; the kernel log says nothing of it";
    } else {
      text += "; the kernel log says:";
      for (const auto& line : lines) {
        text += " \"" + line + "\"";
      }
    }
    return {model::problem(model::EventKind::kVfProbeFailed, std::move(text), run.target.pci.str(),
                           vf.str()),
            std::nullopt};
  }
  return {std::nullopt, probed.guid};
}

}  // namespace vfready::pipeline
