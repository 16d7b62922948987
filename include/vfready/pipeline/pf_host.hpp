// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "vfready/host/links.hpp"
#include "vfready/host/sriov_calls.hpp"
#include "vfready/host/sriov_reads.hpp"
#include "vfready/host/udev_wait.hpp"

namespace vfready::pipeline {

class AutoprobeGuards;

// The OS as one PF's bring-up sees it, by concern: what it reads of the PF and its
// VFs, the calls into their driver, netlink links, udev.
struct PfHost {
  host::SriovReads& reads;
  host::SriovCalls& calls;
  host::Links& links;
  host::UdevWait& udev;
  // Where a pass's autoprobe guard goes while it lives: the daemon's, for its end.
  AutoprobeGuards* autoprobe_guards = nullptr;
};

}  // namespace vfready::pipeline
