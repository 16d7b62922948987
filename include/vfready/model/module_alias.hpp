// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

// Which module drives a PCI device ID, as depmod's modules.alias says: pure text work.
namespace vfready::model {

// The module of the first line of `aliases` (modules.alias text) whose pattern names
// exactly this vendor and device ("alias pci:v00008086d000010CAsv*sd*bc*sc*i* igbvf"),
// case-insensitively; patterns with a wildcard in the vendor or device (vfio-pci's class
// matches, pci-stub) are not a device's own driver. nullopt when no line names it.
std::optional<std::string> pci_module_for(std::string_view aliases, uint16_t vendor,
                                          uint16_t device);

}  // namespace vfready::model
