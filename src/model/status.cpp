// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/status.hpp"

#include <algorithm>

namespace vfready::model {

const char* to_string(PfState state) {
  switch (state) {
    case PfState::kPending:
      return "pending";
    case PfState::kReady:
      return "ready";
    case PfState::kFailed:
      return "failed";
  }
  return "unknown";
}

const char* to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::kReady:
      return "ready";
    case Outcome::kDegraded:
      return "degraded";
    case Outcome::kFailed:
      return "failed";
  }
  return "unknown";
}

Outcome outcome_of(const std::vector<PfStatus>& pfs) {
  const auto ready = std::count_if(pfs.begin(), pfs.end(),
                                   [](const PfStatus& p) { return p.state == PfState::kReady; });
  if (ready == static_cast<std::ptrdiff_t>(pfs.size())) {
    return Outcome::kReady;
  }
  return ready == 0 ? Outcome::kFailed : Outcome::kDegraded;
}

}  // namespace vfready::model

namespace vfready::model {

std::vector<StepTiming> overall_steps(const std::vector<PfStatus>& pfs) {
  std::vector<StepTiming> out;
  for (const auto& pf : pfs) {
    for (const auto& s : pf.steps) {
      auto it = std::find_if(out.begin(), out.end(),
                             [&](const StepTiming& o) { return o.name == s.name; });
      if (it == out.end()) {
        out.push_back(s);
        continue;
      }
      const double end = std::max(it->started_ms + it->elapsed_ms, s.started_ms + s.elapsed_ms);
      it->started_ms = std::min(it->started_ms, s.started_ms);
      it->elapsed_ms = end - it->started_ms;
      // failed outranks running, which outranks done
      if (s.state == "failed" || (s.state == "running" && it->state == "done")) {
        it->state = s.state;
      }
    }
  }
  return out;
}

}  // namespace vfready::model
