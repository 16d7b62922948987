// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "vfready/host/links.hpp"
#include "vfready/host/sriov_calls.hpp"
#include "vfready/host/sriov_reads.hpp"
#include "vfready/host/udev_wait.hpp"

namespace vfready::pipeline {

// The OS as one PF's bring-up sees it, by concern: what it reads of the PF and its
// VFs, the calls into their driver, netlink links, udev.
struct PfHost {
  host::SriovReads& reads;
  host::SriovCalls& calls;
  host::Links& links;
  host::UdevWait& udev;
};

}  // namespace vfready::pipeline
