// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

// What bus.cpp's objects build their properties with: no D-Bus of their own.
namespace vfready::bus {

// Each of `items` made into a T by `make`: what a property of structs shows.
template <class T, class Items, class Make>
inline std::vector<T> mapped(const Items& items, Make make) {
  std::vector<T> out;
  out.reserve(items.size());
  for (const auto& item : items) {
    out.push_back(make(item));
  }
  return out;
}

// The names of the properties whose value is not the same: what PropertiesChanged lists.
inline std::vector<std::string> changed_names(
    std::initializer_list<std::pair<const char*, bool>> same) {
  std::vector<std::string> out;
  for (const auto& [name, is_same] : same) {
    if (!is_same) {
      out.emplace_back(name);
    }
  }
  return out;
}

}  // namespace vfready::bus
