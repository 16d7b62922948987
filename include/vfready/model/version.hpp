// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vfready/model/result.hpp"

namespace vfready::model {

// A numeric version such as firmware "28.43.1014" or OFED "24.10-0.7.0". Components
// are separated by '.' or '-'; comparison is numeric, component by component, with
// missing trailing components counting as zero ("24.10" == "24.10.0").
class Version {
 public:
  // Every component must be a decimal number.
  static Result<Version> parse(std::string_view text);
  // The leading numeric components of a longer string, for kernel releases:
  // "6.8.0-55-generic" gives 6.8.0.55. Fails when the text does not start with one.
  static Result<Version> parse_prefix(std::string_view text);

  [[nodiscard]] const std::vector<uint64_t>& components() const { return parts_; }
  // The text it was parsed from (for messages).
  [[nodiscard]] const std::string& str() const { return text_; }

  friend std::strong_ordering operator<=>(const Version& a, const Version& b);
  friend bool operator==(const Version& a, const Version& b) { return std::is_eq(a <=> b); }

 private:
  Version(std::vector<uint64_t> parts, std::string text)
      : parts_(std::move(parts)), text_(std::move(text)) {}

  std::vector<uint64_t> parts_;
  std::string text_;
};

}  // namespace vfready::model
