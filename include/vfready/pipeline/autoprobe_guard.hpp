// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>

#include "vfready/host/sriov_calls.hpp"
#include "vfready/model/pci_address.hpp"
#include "vfready/model/problem.hpp"
#include "vfready/pipeline/task.hpp"

// sriov_drivers_autoprobe of one PF is off only while a pass creates its VFs: on again
// on every way out of the pass (this object's end), and turned on by a pass that finds
// it off (left so by a predecessor that died mid-pass). vfready keeps it on between
// passes, so that VFs a driver reload re-creates probe by themselves.
namespace vfready::pipeline {

class AutoprobeGuard {
 public:
  // `found_on`: the PF's autoprobe as the pass read it.
  AutoprobeGuard(host::SriovCalls& host, const model::PciAddress& pf, bool found_on)
      : host_(host), pf_(pf), off_(!found_on) {}
  ~AutoprobeGuard() { static_cast<void>(restore()); }
  AutoprobeGuard(const AutoprobeGuard&) = delete;
  AutoprobeGuard& operator=(const AutoprobeGuard&) = delete;

  // Off, for VFs about to be created; 0 or the errno.
  int turn_off();
  // On again if it is off; the problem when that fails (the kernel then probes none of
  // the PF's VFs). Once. (What the guard's end does, should a pass end by an exception.)
  std::optional<model::Problem> restore();
  // turn_off() and restore() as a pass's tasks: the write's answer is waited for there.
  Task<int> turning_off();
  Task<std::optional<model::Problem>> restoring();
  [[nodiscard]] bool off() const { return off_; }

 private:
  host::SriovCalls& host_;
  model::PciAddress pf_;
  bool off_;
};

}  // namespace vfready::pipeline
