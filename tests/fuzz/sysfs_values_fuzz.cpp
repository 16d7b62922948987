// SPDX-License-Identifier: Apache-2.0
// Values read from sysfs and netlink (GUIDs, firmware versions, PCI addresses, netdev
// names): each parser answers a value or an error for any bytes, and a value it
// accepts prints as text it accepts again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "vfready/model/guid.hpp"
#include "vfready/model/if_name.hpp"
#include "vfready/model/pci_address.hpp"
#include "vfready/model/printable.hpp"
#include "vfready/model/version.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace vfready::model;
  if (auto g = Guid::parse(text); g && !Guid::parse(g->str())) {
    std::abort();
  }
  if (auto p = PciAddress::parse(text); p && !PciAddress::parse(p->str())) {
    std::abort();
  }
  static_cast<void>(Version::parse(text));
  static_cast<void>(Version::parse_prefix(text));
  static_cast<void>(IfName::parse(text));
  static_cast<void>(AltName::parse(text));
  static_cast<void>(printable(text));
  return 0;
}
