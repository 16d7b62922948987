// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <set>
#include <string>
#include <utility>

// Interface names are node-wide: the namings of all PFs and VFs take turns through this
// (one at a time: a name one frees is taken by the next), which also knows every netdev
// vfready manages (so a name held by one of ours can be moved aside, and one held by
// anything else is never taken). The daemon keeps one for its whole life: names outlive
// passes. Used on the loop's thread only, as every pass runs there.
namespace vfready::pipeline {

class NameRegistry {
 public:
  // The configured PFs (PCI addresses): netdevs of these and of their VFs are ours.
  explicit NameRegistry(std::set<std::string> pfs = {});
  ~NameRegistry();
  NameRegistry(const NameRegistry&) = delete;
  NameRegistry& operator=(const NameRegistry&) = delete;

  // The turn to change names: true when it was free and is now the caller's, until
  // end_turn(). A naming awaits its requests during its turn, so turns are taken, not
  // locked: a naming that waits for one waits on turn_fd(). (Use NamingTurn.)
  bool take_turn();
  void end_turn();
  // Whether take_turn() would succeed now.
  [[nodiscard]] bool turn_free() const { return !turn_; }
  // Readable once a turn has ended since the turn was last taken (-1 when no eventfd
  // could be made: then look again after a while).
  [[nodiscard]] int turn_fd() const { return turn_fd_; }

  // During a turn.
  void manage(int ifindex) { managed_.insert(ifindex); }
  [[nodiscard]] bool managed(int ifindex) const { return managed_.contains(ifindex); }
  [[nodiscard]] bool is_configured_pf(const std::string& pci) const { return pfs_.contains(pci); }
  // A new plan's PFs (a reload): later namings judge by these.
  void configure(std::set<std::string> pfs) { pfs_ = std::move(pfs); }

 private:
  bool turn_ = false;  // held
  int turn_fd_ = -1;
  std::set<int> managed_;
  std::set<std::string> pfs_;
};

// The turn, held from take() for the scope (a naming's task: ended also when the task
// is dropped).
class NamingTurn {
 public:
  explicit NamingTurn(NameRegistry& names) : names_(names) {}
  ~NamingTurn() {
    if (held_) {
      names_.end_turn();
    }
  }
  NamingTurn(const NamingTurn&) = delete;
  NamingTurn& operator=(const NamingTurn&) = delete;
  // Whether the turn was free and is now this one's.
  bool take() {
    held_ = names_.take_turn();
    return held_;
  }

 private:
  NameRegistry& names_;
  bool held_ = false;
};

}  // namespace vfready::pipeline
