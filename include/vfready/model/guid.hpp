// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "vfready/model/result.hpp"
#include "vfready/model/short_text.hpp"

namespace vfready::model {

// A 64-bit InfiniBand GUID (node or port).
class Guid {
 public:
  constexpr explicit Guid(uint64_t value) : value_(value) {}

  // Accepts the two spellings the host uses: eight colon-separated bytes
  // ("02:00:00:00:00:00:00:01", OFED sysfs and iproute2) and four colon-separated
  // 16-bit groups ("a088:c203:0030:1000", sysfs node_guid). Hex digits of either case.
  static Result<Guid> parse(std::string_view text);

  [[nodiscard]] constexpr uint64_t value() const { return value_; }
  [[nodiscard]] constexpr bool is_zero() const { return value_ == 0; }
  [[nodiscard]] constexpr bool is_all_ones() const { return value_ == ~uint64_t{0}; }
  // Zero means "unset" to the HCA and all-ones is reserved: neither may be assigned.
  [[nodiscard]] constexpr bool is_assignable() const { return !is_zero() && !is_all_ones(); }

  // "02:00:00:00:00:00:00:01"
  [[nodiscard]] std::string str() const;
  [[nodiscard]] ShortText text() const;  // the same, not allocated
  // "0200:0000:0000:0001"
  [[nodiscard]] std::string sysfs_str() const;

  friend constexpr auto operator<=>(const Guid&, const Guid&) = default;

 private:
  uint64_t value_;
};

// What OFED's sriov/<n>/policy says of a VF's port state: as the PF's port (Follow), or
// always up or down.
enum class GuidPolicy : uint8_t { kFollow, kUp, kDown };
// "Follow", "Up", "Down": the words the file takes and the config spells.
const char* to_string(GuidPolicy policy);

}  // namespace vfready::model
