// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>

#include "vfready/model/config.hpp"
#include "vfready/model/inventory.hpp"

namespace vfready::model {

// VF n's MAC on the `ordinal`-th PF of an Ethernet entry, by the entry's scheme: nullopt
// when its pool is too small; an empty optional inside when the PF has no burned-in MAC
// to derive from (make_plan gives the PF a problem for it).
std::optional<std::optional<Mac>> plan_mac(const PfConfig& entry, const PfInfo& info,
                                           uint16_t ordinal, uint16_t n);

}  // namespace vfready::model
