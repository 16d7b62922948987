// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <mutex>
#include <set>
#include <string>
#include <utility>

// Interface names are node-wide: the naming steps of all PFs take turns through this,
// which also knows every netdev vfready manages (so a name held by one of ours can be
// moved aside, and one held by anything else is never taken). The daemon keeps one for
// its whole life: names outlive passes.
namespace vfready::pipeline {

class NameRegistry {
 public:
  // The configured PFs (PCI addresses): netdevs of these and of their VFs are ours.
  explicit NameRegistry(std::set<std::string> pfs = {}) : pfs_(std::move(pfs)) {}
  // Held while one PF's naming step changes names.
  std::mutex& mutex() { return mu_; }
  // Called with mutex() held.
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
  std::mutex mu_;
  std::set<int> managed_;
  mutable std::mutex pfs_mu_;
  std::set<std::string> pfs_;
};

}  // namespace vfready::pipeline
