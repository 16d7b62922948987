// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <compare>
#include <string>
#include <string_view>

#include "vfready/model/result.hpp"

namespace vfready::model {

// A network interface name the kernel accepts (dev_valid_name()) and keeps as given
// (dev_get_valid_name() turns a '%' into a number): 1-15 bytes of printable ASCII, not
// "." or "..", no '/', ':' or '%'.
class IfName {
 public:
  static constexpr std::size_t kMaxLength = 15;  // IFNAMSIZ - 1

  static Result<IfName> parse(std::string_view text);

  [[nodiscard]] const std::string& str() const { return name_; }

  friend auto operator<=>(const IfName&, const IfName&) = default;

 private:
  explicit IfName(std::string name) : name_(std::move(name)) {}
  std::string name_;
};

// An alternative interface name (IFLA_ALT_IFNAME): the same character rules, but up
// to 127 bytes (ALTIFNAMSIZ 128 with the terminator).
class AltName {
 public:
  static constexpr std::size_t kMaxLength = 127;

  static Result<AltName> parse(std::string_view text);

  [[nodiscard]] const std::string& str() const { return name_; }

  friend auto operator<=>(const AltName&, const AltName&) = default;

 private:
  explicit AltName(std::string name) : name_(std::move(name)) {}
  std::string name_;
};

}  // namespace vfready::model
