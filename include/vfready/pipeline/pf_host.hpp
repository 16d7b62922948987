// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "vfready/host/links.hpp"
#include "vfready/host/sriov_host.hpp"
#include "vfready/host/udev_wait.hpp"

namespace vfready::pipeline {

// The OS as one PF's bring-up sees it: the SR-IOV side, links, udev.
struct PfHost {
  host::SriovHost& sriov;
  host::Links& links;
  host::UdevWait& udev;
};

}  // namespace vfready::pipeline
