// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "vfready/model/result.hpp"
#include "vfready/model/short_text.hpp"

namespace vfready::model {

// A PCI function address, domain:bus:device.function, as the kernel names it in
// sysfs: lower case, domain at least four hex digits ("0000:18:00.0").
class PciAddress {
 public:
  // Accepts "dddd:bb:dd.f" (domain of 1-8 hex digits, as VMD domains are wider than
  // four) and the lspci short form "bb:dd.f" (domain 0). Case is normalised.
  static Result<PciAddress> parse(std::string_view text);
  static PciAddress from_parts(uint32_t domain, uint8_t bus, uint8_t device, uint8_t function);
  // The function with this routing ID (bus << 8 | device << 3 | function), as SR-IOV
  // places VFs at PF + First VF Offset + n * VF Stride. Fails beyond 16 bits.
  static Result<PciAddress> from_routing_id(uint32_t domain, uint32_t routing_id);

  [[nodiscard]] uint32_t domain() const { return domain_; }
  [[nodiscard]] uint8_t bus() const { return bus_; }
  [[nodiscard]] uint8_t device() const { return device_; }
  [[nodiscard]] uint8_t function() const { return function_; }
  // Bus, device and function as one 16-bit number (bus << 8 | device << 3 | function).
  [[nodiscard]] uint16_t routing_id() const;

  [[nodiscard]] std::string str() const;
  [[nodiscard]] ShortText text() const;  // the same, not allocated

  friend auto operator<=>(const PciAddress&, const PciAddress&) = default;

 private:
  PciAddress(uint32_t domain, uint8_t bus, uint8_t device, uint8_t function)
      : domain_(domain), bus_(bus), device_(device), function_(function) {}

  uint32_t domain_;
  uint8_t bus_;
  uint8_t device_;
  uint8_t function_;
};

}  // namespace vfready::model
