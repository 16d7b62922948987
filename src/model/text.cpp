// SPDX-License-Identifier: Apache-2.0
#include "text.hpp"

#include <charconv>

namespace vfready::model::text {

std::optional<uint64_t> parse_uint(std::string_view digits, int base, uint64_t max) {
  if (digits.empty()) {
    return std::nullopt;
  }
  uint64_t value = 0;
  const char* end = digits.data() + digits.size();
  auto [ptr, ec] = std::from_chars(digits.data(), end, value, base);
  if (ec != std::errc{} || ptr != end || value > max) {
    return std::nullopt;
  }
  return value;
}

std::string hex(uint64_t value, int digits) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(static_cast<std::size_t>(digits), '0');
  for (int i = digits - 1; i >= 0; --i) {
    out[static_cast<std::size_t>(i)] = kDigits[value & 0xf];
    value >>= 4;
  }
  return out;
}

std::string quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += "\\x" + hex(byte, 2);
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

}  // namespace vfready::model::text
