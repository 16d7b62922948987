// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>

#include "vfready/host/sysfs.hpp"

// The RDMA device of a PCI function: a hardware driver's (mlx5_ib, bnxt_re, irdma) under
// the function itself, or a software one (rdma_rxe, siw) over the function's netdev.
namespace vfready::host {

struct RdmaDevice {
  std::string name;  // "mlx5_0", "rxe0"
  std::string dir;   // relative to the sysfs root, with a trailing '/'
  // Over the function's netdev (class/infiniband/<name>/), not under the function: made
  // by an operator (rdma link add), not by the NIC's driver as it probes.
  bool over_netdev = false;
};

// `function_dir`'s device ("bus/pci/devices/<address>/"), else the one whose port 1 has
// `netdev` as its default GID's netdev (gid_attrs/ndevs/0: the entry the kernel's RoCE
// GID table keeps for the port's own netdev, up or down). Nothing when neither is there.
std::optional<RdmaDevice> rdma_device_of(Sysfs& sysfs, const std::string& function_dir,
                                         const std::optional<std::string>& netdev);

}  // namespace vfready::host
