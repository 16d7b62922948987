// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "vfready/model/checks.hpp"

// The parts of check_hardware() that hold for a PF of any driver; a PF that mlx5_core does
// not drive gets these in place of mlx5's firmware, link type and mlxconfig checks.
namespace vfready::model {

// Its VF driver (PfInfo::vf_driver) known and loaded; nothing for mlx5_core's PFs, whose
// VFs are its own.
void check_vf_driver(const PfInfo& info, Verdict& v);
// Its link layer (its RDMA port's, else its netdev's) as the entry says.
void check_link_layer(const PfTarget& target, const PfInfo& info, Verdict& v);
// SR-IOV there, with at least the VFs the entry asks for.
void check_capacity(const PfTarget& target, const PfInfo& info, Verdict& v);

}  // namespace vfready::model
