// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
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

  // The turn to change names, for `owner` (a PF's PCI address): its token when it was
  // free and is now the owner's, until end_turn(token). A naming awaits its requests
  // during its turn, so turns are taken, not locked: a naming that waits for one waits
  // on turn_fd(). (Use NamingTurn.)
  std::optional<uint64_t> take_turn(const std::string& owner);
  // Ends the turn `token` gave; nothing when it is no longer that one (revoked).
  void end_turn(uint64_t token);
  // Whether take_turn() would succeed now.
  [[nodiscard]] bool turn_free();
  // The turn ends if `owner` holds it: its pass was given up (a thread held in the
  // kernel), and the task that holds the turn may never go on.
  void revoke(const std::string& owner);
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
  std::optional<uint64_t> turn_;  // the token of the turn held
  std::string turn_owner_;
  uint64_t next_token_ = 1;
  int turn_fd_ = -1;
  void free_turn();  // with turn_mu_ held
  std::set<int> managed_;
  mutable std::mutex pfs_mu_;
  std::set<std::string> pfs_;
};

// The turn, held from take() for the scope (a naming's task: ended also when the task
// is dropped).
class NamingTurn {
 public:
  explicit NamingTurn(NameRegistry& names) : names_(names) {}
  ~NamingTurn() {
    if (token_) {
      names_.end_turn(*token_);
    }
  }
  NamingTurn(const NamingTurn&) = delete;
  NamingTurn& operator=(const NamingTurn&) = delete;
  // Whether the turn was free and is now this one's.
  bool take(const std::string& owner) {
    token_ = names_.take_turn(owner);
    return token_.has_value();
  }

 private:
  NameRegistry& names_;
  std::optional<uint64_t> token_;
};

}  // namespace vfready::pipeline
