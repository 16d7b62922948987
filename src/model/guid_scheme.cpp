// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/guid_scheme.hpp"

namespace vfready::model {

Guid derive_vf_guid(Guid pf_node_guid, uint16_t vf) {
  const uint64_t pf = pf_node_guid.value();
  const uint64_t oui = pf >> 40;
  const uint64_t fold = (oui ^ (oui >> 8) ^ (oui >> 16)) & 0xff;
  const uint64_t extension = pf & 0xff'ffff'ffffULL;
  return Guid{(uint64_t{kDerivedGuidPrefix} << 56) | (fold << 48) | (extension << 8) |
              (vf & 0xffU)};
}

}  // namespace vfready::model
