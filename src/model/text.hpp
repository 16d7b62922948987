// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "vfready/model/printable.hpp"

namespace vfready::model::text {

// Parses exactly the whole of `digits` as a number in `base`; no sign, no prefix,
// no whitespace. nullopt when empty, malformed or out of range.
std::optional<uint64_t> parse_uint(std::string_view digits, int base, uint64_t max);

// `value` as exactly `digits` lower-case hex digits (the low bits when it is wider).
std::string hex(uint64_t value, int digits);
// The same digits written over `out` from `at` on (out has room for them).
void put_hex(std::string& out, std::size_t at, uint64_t value, int digits);
void put_hex(char* out, uint64_t value, int digits);
// A hex digit's value (either case), -1 for any other character.
inline int hex_value(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  const char lower = static_cast<char>(c | 0x20);
  return lower >= 'a' && lower <= 'f' ? lower - 'a' + 10 : -1;
}
// `text` as `groups` groups of `width` hex digits, each after the first following a ':'
// (a GUID as the kernel and vfready write it): its value, nothing for any other text.
std::optional<uint64_t> grouped_hex(std::string_view text, int groups, int width);

using model::printable;  // vfready/model/printable.hpp

// `text` quoted for a message, with control bytes escaped, so that what a person
// reads shows exactly what was given (a trailing newline, a tab).
std::string quote(std::string_view text);

}  // namespace vfready::model::text
