// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "drift.hpp"
#include "vfready/host/clock.hpp"
#include "vfready/model/problem.hpp"

// Another tool that renames a link vfready names back, again and again (a udev rule, a
// network manager): vfready names it back each time at first, and after a bound stops
// fighting: it says so as a problem that names the link and the other name, and tries
// again at a slow rate while the renames go on. Pure: the caller gives the time.
namespace vfready::daemon {

class NameFights {
 public:
  using Clock = host::Clock;
  // Renames of one link within this window past this count: a fight.
  static constexpr std::chrono::seconds kWindow{60};
  static constexpr std::size_t kRenames = 5;
  // How often a link in a fight is named back.
  static constexpr std::chrono::seconds kRetry{60};

  struct Verdict {
    bool repair_now = true;                 // name it back at once
    std::optional<model::Problem> started;  // the fight begins with this rename
  };
  // `drift` renamed a link vfready names (drift.renamed) at `now`. A rename counts once
  // vfready has named the link back since the last one counted (named_back()): the
  // other events of the link meanwhile (its rename seen again, MTU, carrier) are the
  // same rename.
  Verdict renamed(const Drift& drift, Clock::time_point now);
  // A pass over PF `pf` has ended: it named its links back.
  void named_back(const std::string& pf);
  // Whether the link of `pf`/`vf` is in a fight at `now` (one ends a window after its
  // last rename).
  [[nodiscard]] bool fighting(const std::string& pf, const std::string& vf, Clock::time_point now);
  // The problems of the fights going on at `now`, one a link.
  [[nodiscard]] std::vector<model::Problem> problems(Clock::time_point now);

 private:
  struct Fight {
    std::deque<Clock::time_point> renames;  // within the window
    std::string other_name;                 // the latest name the other tool gave
    std::string link;                       // what vfready calls it ("VF 0000:18:00.1")
    bool on = false;
    bool counted = false;  // a rename counted, and no pass over its PF ended since
  };
  static std::string key(const std::string& pf, const std::string& vf) { return pf + "/" + vf; }
  void forget_old(Fight& f, Clock::time_point now);
  static model::Problem problem_of(const Drift& where, const Fight& f);

  std::map<std::string, Fight> fights_;
  std::map<std::string, Drift> where_;  // the drift that began each fight
};

}  // namespace vfready::daemon
