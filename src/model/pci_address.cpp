// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/pci_address.hpp"

#include <array>
#include <optional>

#include "text.hpp"

namespace vfready::model {

namespace {

Error invalid(std::string_view text, std::string_view why) {
  return Error{"invalid PCI address " + text::quote(text) + ": " + std::string(why) +
               " (expected domain:bus:device.function, e.g. 0000:18:00.0)"};
}

// "dddd:bb:dd.f", the kernel's own spelling (every device of a DGX, every udev event):
// read without from_chars. Nothing when the text is not in it.
std::optional<PciAddress> parse_kernel_spelling(std::string_view t) {
  constexpr std::size_t kLength = 12;
  if (t.size() != kLength || t[4] != ':' || t[7] != ':' || t[10] != '.' || t[11] < '0' ||
      t[11] > '7') {
    return std::nullopt;
  }
  constexpr std::array<std::size_t, 8> kAt = {0, 1, 2, 3, 5, 6, 8, 9};  // the hex digits
  std::array<int, 8> v{};
  for (std::size_t i = 0; i < kAt.size(); ++i) {
    v.at(i) = text::hex_value(t[kAt.at(i)]);
    if (v.at(i) < 0) {
      return std::nullopt;
    }
  }
  const int device = (v[6] << 4) | v[7];
  if (device > 0x1f) {
    return std::nullopt;
  }
  return PciAddress::from_parts(
      static_cast<uint32_t>((v[0] << 12) | (v[1] << 8) | (v[2] << 4) | v[3]),
      static_cast<uint8_t>((v[4] << 4) | v[5]), static_cast<uint8_t>(device),
      static_cast<uint8_t>(t[11] - '0'));
}

}  // namespace

Result<PciAddress> PciAddress::parse(std::string_view text) {
  if (const auto quick = parse_kernel_spelling(text)) {
    return *quick;
  }
  std::string_view rest = text;
  uint64_t domain = 0;
  // Domain present when there are two colons.
  if (const auto first = rest.find(':');
      first != std::string_view::npos && rest.find(':', first + 1) != std::string_view::npos) {
    auto d = text::parse_uint(rest.substr(0, first), 16, 0xffffffff);
    if (!d || first > 8) {
      return invalid(text, "domain must be 1-8 hex digits");
    }
    domain = *d;
    rest.remove_prefix(first + 1);
  }
  const auto colon = rest.find(':');
  const auto dot = rest.find('.');
  if (colon == std::string_view::npos || dot == std::string_view::npos || dot < colon) {
    return invalid(text, "missing ':' or '.'");
  }
  const auto bus_text = rest.substr(0, colon);
  const auto dev_text = rest.substr(colon + 1, dot - colon - 1);
  const auto fn_text = rest.substr(dot + 1);
  auto bus = text::parse_uint(bus_text, 16, 0xff);
  if (!bus || bus_text.size() != 2) {
    return invalid(text, "bus must be two hex digits");
  }
  auto dev = text::parse_uint(dev_text, 16, 0x1f);
  if (!dev || dev_text.size() != 2) {
    return invalid(text, "device must be two hex digits, 00-1f");
  }
  auto fn = text::parse_uint(fn_text, 8, 7);
  if (!fn || fn_text.size() != 1) {
    return invalid(text, "function must be one digit, 0-7");
  }
  return PciAddress(static_cast<uint32_t>(domain), static_cast<uint8_t>(*bus),
                    static_cast<uint8_t>(*dev), static_cast<uint8_t>(*fn));
}

PciAddress PciAddress::from_parts(uint32_t domain, uint8_t bus, uint8_t device, uint8_t function) {
  return {domain, bus, static_cast<uint8_t>(device & 0x1f), static_cast<uint8_t>(function & 0x7)};
}

Result<PciAddress> PciAddress::from_routing_id(uint32_t domain, uint32_t routing_id) {
  if (routing_id > 0xffff) {
    return Error{"PCI routing ID " + std::to_string(routing_id) +
                 " is beyond the last bus (at most 65535)"};
  }
  return PciAddress(domain, static_cast<uint8_t>(routing_id >> 8),
                    static_cast<uint8_t>((routing_id >> 3) & 0x1f),
                    static_cast<uint8_t>(routing_id & 0x7));
}

uint16_t PciAddress::routing_id() const {
  return static_cast<uint16_t>((bus_ << 8) | (device_ << 3) | function_);
}

std::string PciAddress::str() const { return text().str(); }

ShortText PciAddress::text() const {
  // The kernel prints "%04x": at least four digits, more for wide (VMD) domains.
  int domain_digits = 4;
  while (domain_digits < 8 && (domain_ >> (4 * domain_digits)) != 0) {
    ++domain_digits;
  }
  // dddd:bb:dd.f, written in place: every VF's paths and messages are made of these.
  const auto d = static_cast<std::size_t>(domain_digits);
  ShortText out;
  char* p = out.data();
  text::put_hex(p, domain_, domain_digits);
  p[d] = ':';  // NOLINT: at most 16 of its 24 bytes
  text::put_hex(p + d + 1, bus_, 2);
  p[d + 3] = ':';  // NOLINT
  text::put_hex(p + d + 4, device_, 2);
  p[d + 6] = '.';  // NOLINT
  text::put_hex(p + d + 7, function_, 1);
  out.set_size(d + 8);
  return out;
}

}  // namespace vfready::model
