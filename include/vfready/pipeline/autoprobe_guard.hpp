// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "vfready/host/sriov_calls.hpp"
#include "vfready/model/pci_address.hpp"
#include "vfready/model/problem.hpp"

// sriov_drivers_autoprobe of one PF is off only while a pass creates its VFs: on again
// on every way out of the pass (this object's end), and turned on by a pass that finds
// it off (left so by a predecessor that died mid-pass). vfready keeps it on between
// passes, so that VFs a driver reload re-creates probe by themselves. One exception: a
// pass that ends with its PF stuck in a call (its sriov_numvfs write, say) leaves it
// off, so that the VFs that write makes when it returns wait unbound for the pass that
// brings the PF up again (GUIDs first, then one probe each). Written at once, by the
// caller (SriovCalls::set_autoprobe: a flag no driver's lock guards), never awaited.
namespace vfready::pipeline {

class AutoprobeGuard;

// The guards of the passes under way, for the daemon's end (Service::quit): it exits
// without unwinding them, so each PF a pass has autoprobe off on is turned on through
// let_go(). Owned by the loop with the passes, each guard in it while it lives.
class AutoprobeGuards {
 public:
  void add(AutoprobeGuard* guard) { guards_.push_back(guard); }
  void remove(AutoprobeGuard* guard);
  [[nodiscard]] std::size_t size() const { return guards_.size(); }
  // Each guard's let_go().
  void let_go();

 private:
  std::vector<AutoprobeGuard*> guards_;
};

class AutoprobeGuard {
 public:
  // `found_on`: the PF's autoprobe as the pass read it. `guards`: where the daemon finds
  // it at its end (none in tests of a pass alone).
  AutoprobeGuard(host::SriovCalls& host, const model::PciAddress& pf, bool found_on,
                 AutoprobeGuards* guards = nullptr)
      : host_(host), pf_(pf), off_(!found_on), guards_(guards) {
    if (guards_ != nullptr) {
      guards_->add(this);
    }
  }
  ~AutoprobeGuard();
  AutoprobeGuard(const AutoprobeGuard&) = delete;
  AutoprobeGuard& operator=(const AutoprobeGuard&) = delete;

  // Off, for VFs about to be created: 0 or the errno.
  int turn_off();
  // On again if it is off, unless the PF is stuck (left off: above): the problem when
  // the write fails (the kernel then probes none of the PF's VFs). Should a pass end
  // without it, the guard's end turns it on.
  std::optional<model::Problem> restore();
  [[nodiscard]] bool off() const { return off_; }
  // On again if it is off, stuck PF or not (the daemon's end, a pass that threw).
  void let_go();

 private:
  host::SriovCalls& host_;
  model::PciAddress pf_;
  bool off_;
  AutoprobeGuards* guards_;
};

}  // namespace vfready::pipeline
