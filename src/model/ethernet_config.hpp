// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "vfready/model/config.hpp"
#include "vfready/model/json_reader.hpp"

// The keys of an Ethernet entry (parse_config): its MACs and the VF settings set
// through the PF. Each fails through the reader, naming the file and JSON path.
namespace vfready::model {

// "mac": {"scheme", "first", "last", "macs"} of `pf` (its vfs and selector parsed).
MacConfig mac_config(const JsonReader& r, const PfConfig& pf);
// "vlan", "qos", "trust", "spoofchk", "link_state" of the entry `r`.
VfPortConfig vf_port_config(const JsonReader& r);

}  // namespace vfready::model
