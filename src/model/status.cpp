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
