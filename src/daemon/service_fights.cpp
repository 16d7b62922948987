// SPDX-License-Identifier: Apache-2.0
// Links another tool keeps renaming (NameFights): what the service shows of them, and
// how often it names them back.
#include <algorithm>

#include "log.hpp"
#include "service.hpp"

namespace vfready::daemon {

bool Service::in_fight(const Drift& drift) {
  const auto verdict = fights_.renamed(drift, Clock::now());
  if (verdict.repair_now) {
    return false;
  }
  if (verdict.started) {
    log::warn({.pf = drift.pf,
               .vf = drift.vf,
               .interface = drift.interface,
               .event = model::EventKind::kNameContested},
              verdict.started->text);
    restore_standing_problems();
    retry_contested(drift.pf, drift.vf);
  }
  show_contested(drift);
  publish();
  return true;
}

void Service::show_contested(const Drift& drift) {
  // The row says what the host has until the link is named back: the other tool's name,
  // and the fight as its problem.
  auto problems = fights_.problems(Clock::now());
  const auto fight = std::find_if(problems.begin(), problems.end(), [&](const model::Problem& p) {
    return p.pf == drift.pf && p.vf == drift.vf;
  });
  for (auto& pf : status_.pfs) {
    if (pf.pci.str() != drift.pf) {
      continue;
    }
    auto mark = [&](const std::string& pci, std::string& name, std::vector<model::Problem>& list) {
      status_.contested_names.try_emplace(pci, name);  // vfready's, as the row had it
      name = drift.interface;
      std::erase_if(
          list, [](const model::Problem& p) { return p.kind == model::EventKind::kNameContested; });
      if (fight != problems.end()) {
        list.push_back(*fight);
      }
    };
    if (drift.vf.empty()) {
      mark(drift.pf, pf.name, pf.problems);
    }
    for (auto& vf : pf.vfs) {
      if (vf.pci.str() == drift.vf) {
        mark(drift.vf, vf.name, vf.problems);
      }
    }
  }
}

void Service::fights_after_pass() {
  for (const auto& pf : status_.pfs) {
    fights_.named_back(pf.pci.str());
    if (!bringup_ || !bringup_->went_over(pf.pci.str())) {
      continue;
    }
    status_.contested_names.erase(pf.pci.str());
    for (const auto& vf : pf.vfs) {
      status_.contested_names.erase(vf.pci.str());
    }
  }
}

void Service::retry_contested(const std::string& pf, const std::string& vf) {
  if (!retries_armed_.insert(pf + "/" + vf).second) {
    return;
  }
  loop_.add_timer(Clock::now() + NameFights::kRetry, [this, pf, vf] {
    retries_armed_.erase(pf + "/" + vf);
    // Named back now: while the fight goes on, again after the next interval; once it
    // is over (no rename for a window), this pass leaves the link right.
    dirty_.insert(pf);
    schedule_pass();
    if (fights_.fighting(pf, vf, Clock::now())) {
      retry_contested(pf, vf);
    }
  });
}

}  // namespace vfready::daemon
