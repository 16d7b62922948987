// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/module_alias.hpp"

#include <cctype>
#include <cstdio>

namespace vfready::model {

std::optional<std::string> pci_module_for(std::string_view aliases, uint16_t vendor,
                                          uint16_t device) {
  char want[32];
  static_cast<void>(std::snprintf(want, sizeof want, "alias pci:v%08Xd%08X", vendor, device));
  const std::string_view prefix(want);
  std::size_t at = 0;
  while (at < aliases.size()) {
    auto end = aliases.find('\n', at);
    if (end == std::string_view::npos) {
      end = aliases.size();
    }
    const auto line = aliases.substr(at, end - at);
    at = end + 1;
    if (line.size() <= prefix.size()) {
      continue;
    }
    bool same = true;
    for (std::size_t i = 0; i < prefix.size() && same; ++i) {
      same = std::toupper(static_cast<unsigned char>(line[i])) ==
             std::toupper(static_cast<unsigned char>(prefix[i]));
    }
    if (!same) {
      continue;
    }
    // The rest of the pattern, then one space, then the module's name.
    const auto space = line.rfind(' ');
    if (space == std::string_view::npos || space < prefix.size() || space + 1 == line.size()) {
      continue;
    }
    return std::string(line.substr(space + 1));
  }
  return std::nullopt;
}

}  // namespace vfready::model
