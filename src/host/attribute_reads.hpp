// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <charconv>
#include <optional>
#include <string>
#include <string_view>

#include "vfready/host/sysfs.hpp"
#include "vfready/model/guid.hpp"
#include "vfready/model/mac.hpp"

// Typed reads of one sysfs attribute: nothing when it cannot be read or is not one.
namespace vfready::host {

template <class T>
std::optional<T> number(Sysfs& sysfs, const std::string& rel, int base = 10) {
  auto text = sysfs.read(rel);
  if (!text) {
    return std::nullopt;
  }
  std::string_view s = text.value();
  if (base == 16 && s.starts_with("0x")) {
    s.remove_prefix(2);
  }
  T value{};
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value, base);
  if (ec != std::errc{} || ptr != s.data() + s.size()) {
    return std::nullopt;
  }
  return value;
}

inline std::optional<std::string> text(Sysfs& sysfs, const std::string& rel) {
  auto t = sysfs.read(rel);
  return t ? std::optional<std::string>(t.value()) : std::nullopt;
}

inline std::optional<model::Guid> guid(Sysfs& sysfs, const std::string& rel) {
  auto t = sysfs.read(rel);
  if (!t) {
    return std::nullopt;
  }
  auto g = model::Guid::parse(t.value());
  return g ? std::optional<model::Guid>(g.value()) : std::nullopt;
}

// Whether the PCI driver `name` is registered on the bus: /sys/module/<name> is there
// from the module's load, before its init has registered the driver.
inline bool pci_driver_registered(Sysfs& sysfs, const std::string& name) {
  return !name.empty() && sysfs.exists("bus/pci/drivers/" + name);
}

inline std::optional<model::Mac> mac(Sysfs& sysfs, const std::string& rel) {
  auto t = sysfs.read(rel);
  if (!t) {
    return std::nullopt;
  }
  auto m = model::Mac::parse(t.value());
  return m ? std::optional<model::Mac>(m.value()) : std::nullopt;
}

}  // namespace vfready::host
