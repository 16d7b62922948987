// SPDX-License-Identifier: Apache-2.0
#include "vf_macs.hpp"

namespace vfready::model {

// VF n's MAC on the `ordinal`-th PF of an Ethernet entry: nullopt when the pool is too
// small; an empty optional inside when it cannot be derived (the PF's problem says why).
std::optional<std::optional<Mac>> plan_mac(const PfConfig& entry, const PfInfo& info,
                                           uint16_t ordinal, uint16_t n) {
  switch (entry.mac.scheme) {
    case MacScheme::kDerived:
      return info.permanent_mac ? std::optional(derive_vf_mac(*info.permanent_mac, n))
                                : std::optional<Mac>();
    case MacScheme::kPool: {
      const uint64_t offset = uint64_t{ordinal} * entry.vfs + n;
      const uint64_t first = entry.mac.pool_first.value();
      if (offset > entry.mac.pool_last.value() - first) {
        return std::nullopt;
      }
      return std::optional(Mac::from_value(first + offset));
    }
    case MacScheme::kExplicit:
      return std::optional(entry.mac.macs.at(n));
  }
  return std::optional<Mac>();
}

}  // namespace vfready::model
