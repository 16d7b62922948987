// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "vfready/model/result.hpp"

namespace vfready::model {

// A 48-bit Ethernet MAC address.
class Mac {
 public:
  constexpr Mac() = default;
  constexpr explicit Mac(std::array<uint8_t, 6> bytes) : bytes_(bytes) {}
  // A 48-bit value, most significant byte first.
  static Mac from_value(uint64_t value);

  // Six colon-separated bytes of two hex digits each ("02:aa:bb:cc:dd:01"), as sysfs and
  // iproute2 write them; either case.
  static Result<Mac> parse(std::string_view text);

  [[nodiscard]] const std::array<uint8_t, 6>& bytes() const { return bytes_; }
  [[nodiscard]] uint64_t value() const;
  [[nodiscard]] bool is_zero() const { return value() == 0; }
  // The group bit (multicast, broadcast): no interface's own address.
  [[nodiscard]] bool is_multicast() const { return (bytes_[0] & 0x01) != 0; }
  [[nodiscard]] bool is_local() const { return (bytes_[0] & 0x02) != 0; }
  // What a VF may be given: unicast and not zero (the kernel's is_valid_ether_addr()).
  [[nodiscard]] bool is_assignable() const { return !is_zero() && !is_multicast(); }

  // "02:aa:bb:cc:dd:01"
  [[nodiscard]] std::string str() const;

  friend constexpr auto operator<=>(const Mac&, const Mac&) = default;

 private:
  std::array<uint8_t, 6> bytes_{};
};

// The derived scheme for Ethernet VFs: a VF's MAC from its PF's burned-in MAC and its
// index. Layout, first byte first:
//   [fold of the PF's OUI, locally administered, unicast] [PF's 24-bit NIC part] [VF index: 2
//   bytes]
// Stable across reboots (a function of hardware identity only), never a burned-in
// address (the locally administered bit), unicast, and injective over PFs of one OUI,
// whose NIC parts IEEE makes unique.
Mac derive_vf_mac(Mac pf_mac, uint16_t vf);

}  // namespace vfready::model
