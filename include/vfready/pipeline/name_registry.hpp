// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <mutex>
#include <set>
#include <string>
#include <utility>

// Interface names are node-wide: the namings of all PFs and VFs take turns through this
// (one at a time: a name one frees is taken by the next), which also knows every netdev
// vfready manages (so a name held by one of ours can be moved aside, and one held by
// anything else is never taken). The daemon keeps one for its whole life: names outlive
// passes.
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
  // locked: a naming that waits for one waits on turn_fd().
  bool take_turn();
  void end_turn();
  // Whether take_turn() would succeed now.
  [[nodiscard]] bool turn_free();
  // Readable once a turn has ended since the turn was last taken (-1 when no eventfd
  // could be made: then look again after a while).
  [[nodiscard]] int turn_fd() const { return turn_fd_; }

  // During a turn.
  void manage(int ifindex) { managed_.insert(ifindex); }
  [[nodiscard]] bool managed(int ifindex) const { return managed_.contains(ifindex); }
  [[nodiscard]] bool is_configured_pf(const std::string& pci) const {
    std::lock_guard lock(pfs_mu_);
    return pfs_.contains(pci);
  }
  // A new plan's PFs (a reload): later namings judge by these.
  void configure(std::set<std::string> pfs) {
    std::lock_guard lock(pfs_mu_);
    pfs_ = std::move(pfs);
  }

 private:
  // The turn is taken by the tasks of a pass's runner, and by those of an earlier
  // runner still held in the kernel, on another thread: this guards the flag alone.
  std::mutex turn_mu_;
  bool turn_taken_ = false;
  int turn_fd_ = -1;
  std::set<int> managed_;
  mutable std::mutex pfs_mu_;
  std::set<std::string> pfs_;
};

// The turn, held for a scope (a naming's task: ended also when the task is dropped).
class NamingTurn {
 public:
  explicit NamingTurn(NameRegistry& names) : names_(names) {}
  ~NamingTurn() { names_.end_turn(); }
  NamingTurn(const NamingTurn&) = delete;
  NamingTurn& operator=(const NamingTurn&) = delete;

 private:
  NameRegistry& names_;
};

}  // namespace vfready::pipeline
