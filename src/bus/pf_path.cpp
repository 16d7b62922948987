// SPDX-License-Identifier: Apache-2.0
// A PF's object path: its PCI address escaped as sd-bus escapes a path label.
#include <cctype>

#include "vfready/bus/bus.hpp"

namespace vfready::bus {

std::string pf_path(const std::string& pci) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = kPfPathPrefix;
  for (std::size_t i = 0; i < pci.size(); ++i) {
    const auto c = static_cast<unsigned char>(pci[i]);
    const bool plain = (std::isalnum(c) != 0) && !(i == 0 && std::isdigit(c) != 0);
    if (plain) {
      out += static_cast<char>(c);
    } else {
      out += '_';
      out += kHex[c >> 4U];
      out += kHex[c & 0xFU];
    }
  }
  return out;
}

}  // namespace vfready::bus
