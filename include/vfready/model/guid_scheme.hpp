// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

#include "vfready/model/guid.hpp"

namespace vfready::model {

// The first byte of every derived GUID: locally administered (0x02) and unicast
// (0x01 clear), and not 0x02 itself, so derived GUIDs stay out of ib-kubernetes'
// default pool 02:00:..:00-02:ff:..:ff.
inline constexpr uint8_t kDerivedGuidPrefix = 0x06;

// The largest VF index the derived scheme encodes (one byte).
inline constexpr uint16_t kDerivedMaxVfIndex = 255;

// The derived scheme: a VF's GUID (node and port alike) from its PF's burned-in node
// GUID and its index. Layout, most significant byte first:
//   [0x06] [fold of the PF's OUI] [PF's 40-bit extension: 5 bytes] [VF index]
// Stable across reboots and reinstalls (a function of hardware identity only), never
// zero or all-ones, and injective over PFs of one vendor OUI, whose 40-bit
// extensions IEEE makes unique. docs/guids.md gives the collision odds across OUIs.
// Requires vf <= kDerivedMaxVfIndex.
Guid derive_vf_guid(Guid pf_node_guid, uint16_t vf);

}  // namespace vfready::model
