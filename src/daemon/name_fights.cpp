// SPDX-License-Identifier: Apache-2.0
#include "name_fights.hpp"

namespace vfready::daemon {

void NameFights::forget_old(Fight& f, Clock::time_point now) {
  while (!f.renames.empty() && now - f.renames.front() > kWindow) {
    f.renames.pop_front();
  }
}

model::Problem NameFights::problem_of(const Drift& where, const Fight& f) {
  return model::problem(
      model::EventKind::kNameContested,
      f.link + " was renamed to " + f.other_name + " more than " + std::to_string(kRenames) +
          " times within " + std::to_string(kWindow.count()) +
          " s, each time after vfready named it back: another tool is renaming it (a udev rule "
          "with NAME=, NetworkManager, a .link file). vfready names it back once every " +
          std::to_string(kRetry.count()) + " s until the renames stop",
      where.pf, where.vf);
}

NameFights::Verdict NameFights::renamed(const Drift& drift, Clock::time_point now) {
  auto& f = fights_[key(drift.pf, drift.vf)];
  forget_old(f, now);
  if (!f.counted) {
    f.renames.push_back(now);
    f.counted = true;
  }
  f.other_name = drift.interface;
  if (f.link.empty() || !drift.renamed_from.empty()) {
    f.link = (drift.vf.empty() ? "PF " + drift.pf : "VF " + drift.vf) +
             (drift.renamed_from.empty() ? "" : " (" + drift.renamed_from + ")");
  }
  Verdict v;
  if (f.renames.size() <= kRenames && !f.on) {
    return v;  // not (yet) a fight: named back at once
  }
  v.repair_now = false;
  if (!f.on) {
    f.on = true;
    where_[key(drift.pf, drift.vf)] = drift;
    v.started = problem_of(drift, f);
  }
  return v;
}

void NameFights::named_back(const std::string& pf) {
  const auto prefix = pf + "/";
  for (auto& [k, f] : fights_) {
    if (k.starts_with(prefix)) {
      f.counted = false;
    }
  }
}

bool NameFights::fighting(const std::string& pf, const std::string& vf, Clock::time_point now) {
  auto it = fights_.find(key(pf, vf));
  if (it == fights_.end()) {
    return false;
  }
  forget_old(it->second, now);
  if (it->second.renames.empty()) {
    fights_.erase(it);  // quiet for a whole window: over
    where_.erase(key(pf, vf));
    return false;
  }
  return it->second.on;
}

std::vector<model::Problem> NameFights::problems(Clock::time_point now) {
  std::vector<model::Problem> out;
  for (auto it = fights_.begin(); it != fights_.end();) {
    forget_old(it->second, now);
    if (it->second.renames.empty()) {
      where_.erase(it->first);
      it = fights_.erase(it);
      continue;
    }
    if (it->second.on) {
      out.push_back(problem_of(where_.at(it->first), it->second));
    }
    ++it;
  }
  return out;
}

}  // namespace vfready::daemon
