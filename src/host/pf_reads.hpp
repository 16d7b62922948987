// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vfready/host/sysfs.hpp"
#include "vfready/model/inventory.hpp"

// The parts of a PF's read that take its device lock or its firmware, and what is read
// instead where they must not be (host_reader.cpp).
namespace vfready::host {

// The ports' link layer, and `with_state` their state and physical state (one device
// call); `pf` stuck when the call is held.
void read_ports(Sysfs& sysfs, const model::PciAddress& pci, const std::string& ib_dir,
                const std::vector<std::string>& ports, model::PfInfo& pf, bool with_state);
// sriov_numvfs (one device call), of the PF in `dir`; 0 when it cannot be read.
uint16_t read_numvfs(Sysfs& sysfs, const std::string& dir, model::PfInfo& pf);
// The indexes of the PF's virtfn<n> links, in order, read without its device lock.
std::vector<uint16_t> virtfn_indexes(Sysfs& sysfs, const std::string& dir);

}  // namespace vfready::host
