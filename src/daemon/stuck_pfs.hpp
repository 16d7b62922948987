// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include "vfready/model/status.hpp"

namespace vfready::daemon {

// The PFs a stuck call held up, to bring up again now that it has returned.
struct HeldPfs {
  bool one_pf = false;           // the call was the PF's own (its key is its address)
  std::vector<std::string> pfs;  // PCI addresses
};

// The call stuck under `key`: a PF's own (its key is its PCI address), or one of no
// single PF's (a link request on rtnl_lock, host::kLinksKey), which held up every PF
// that is stuck, or still in its pass.
HeldPfs pfs_held_by(const model::DaemonStatus& status, const std::string& key);

}  // namespace vfready::daemon
