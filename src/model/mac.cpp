// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/mac.hpp"

#include <cstdio>

namespace vfready::model {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

}  // namespace

Mac Mac::from_value(uint64_t value) {
  std::array<uint8_t, 6> b{};
  for (int i = 5; i >= 0; --i) {
    b[static_cast<std::size_t>(i)] = static_cast<uint8_t>(value & 0xff);
    value >>= 8;
  }
  return Mac(b);
}

Result<Mac> Mac::parse(std::string_view text) {
  constexpr std::size_t kText = 17;  // "xx:xx:xx:xx:xx:xx"
  if (!text.empty() && text.back() == '\n') {
    text.remove_suffix(1);
  }
  const auto invalid = [&] {
    return Error{"\"" + std::string(text.substr(0, 32)) +
                 "\" is not a MAC address (six colon-separated hex bytes, "
                 "\"02:aa:bb:cc:dd:01\")"};
  };
  if (text.size() != kText) {
    return invalid();
  }
  std::array<uint8_t, 6> b{};
  for (std::size_t i = 0; i < b.size(); ++i) {
    const std::size_t at = i * 3;
    const int hi = hex_digit(text[at]);
    const int lo = hex_digit(text[at + 1]);
    if (hi < 0 || lo < 0 || (i < b.size() - 1 && text[at + 2] != ':')) {
      return invalid();
    }
    b[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return Mac(b);
}

uint64_t Mac::value() const {
  uint64_t v = 0;
  for (const auto b : bytes_) {
    v = (v << 8) | b;
  }
  return v;
}

std::string Mac::str() const {
  char buf[18];
  static_cast<void>(std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", bytes_[0],
                                  bytes_[1], bytes_[2], bytes_[3], bytes_[4], bytes_[5]));
  return buf;
}

Mac derive_vf_mac(Mac pf_mac, uint16_t vf) {
  const auto& p = pf_mac.bytes();
  const auto fold = static_cast<uint8_t>(p[0] ^ p[1] ^ p[2]);
  constexpr uint8_t kLocal = 0x02;
  constexpr uint8_t kFoldBits = 0xfc;  // the two low bits: group (0) and local (1)
  return Mac({static_cast<uint8_t>((fold & kFoldBits) | kLocal), p[3], p[4], p[5],
              static_cast<uint8_t>(vf >> 8), static_cast<uint8_t>(vf & 0xff)});
}

}  // namespace vfready::model
