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

void put_hex(std::string& out, std::size_t at, uint64_t value, int digits) {
  put_hex(out.data() + at, value, digits);
}

std::optional<uint64_t> grouped_hex(std::string_view text, int groups, int width) {
  const auto w = static_cast<std::size_t>(width);
  if (groups <= 0 || width <= 0 ||
      text.size() != (static_cast<std::size_t>(groups) * (w + 1)) - 1 || groups * width > 16) {
    return std::nullopt;
  }
  uint64_t value = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (i % (w + 1) == w) {
      if (text[i] != ':') {
        return std::nullopt;
      }
      continue;
    }
    const int v = hex_value(text[i]);
    if (v < 0) {
      return std::nullopt;
    }
    value = (value << 4U) | static_cast<uint64_t>(v);
  }
  return value;
}

void put_hex(char* out, uint64_t value, int digits) {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (auto i = static_cast<std::size_t>(digits); i-- > 0; value >>= 4U) {
    out[i] = kDigits[value & 0xfU];  // NOLINT: the caller's room for `digits`
  }
}

std::string hex(uint64_t value, int digits) {
  std::string out(static_cast<std::size_t>(digits), '0');
  put_hex(out, 0, value, digits);
  return out;
}

namespace {

// The length of the valid UTF-8 sequence at the start of `s` (1-4), 0 when none is.
std::size_t utf8_sequence(std::string_view s) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto cont = [&](std::size_t i) { return i < s.size() && (b(i) & 0xc0U) == 0x80U; };
  const unsigned char lead = b(0);
  if (lead < 0x80) {
    return 1;
  }
  if (lead >= 0xc2 && lead <= 0xdf) {
    return cont(1) ? 2 : 0;
  }
  if (lead >= 0xe0 && lead <= 0xef) {
    if (!cont(1) || !cont(2) || (lead == 0xe0 && b(1) < 0xa0) || (lead == 0xed && b(1) > 0x9f)) {
      return 0;  // overlong, or a surrogate
    }
    return 3;
  }
  if (lead >= 0xf0 && lead <= 0xf4) {
    if (!cont(1) || !cont(2) || !cont(3) || (lead == 0xf0 && b(1) < 0x90) ||
        (lead == 0xf4 && b(1) > 0x8f)) {
      return 0;  // overlong, or past U+10FFFF
    }
    return 4;
  }
  return 0;
}

}  // namespace

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
  return printable(out);
}

}  // namespace vfready::model::text

namespace vfready::model {

namespace {

// A C0 control or DEL (one byte), or a C1 control (U+0080..U+009F, two bytes: C2 80..9F,
// which terminals such as xterm act on as they do on ESC sequences).
bool control(std::string_view text, std::size_t n) {
  const auto byte = static_cast<unsigned char>(text.front());
  if (n == 1) {
    return byte < 0x20 || byte == 0x7f;
  }
  constexpr unsigned char kC1Lead = 0xc2;
  constexpr unsigned char kC1Last = 0x9f;
  return n == 2 && byte == kC1Lead && static_cast<unsigned char>(text[1]) <= kC1Last;
}

}  // namespace

bool is_printable(std::string_view text) {
  while (!text.empty()) {
    const auto n = text::utf8_sequence(text);
    if (n == 0 || control(text, n)) {
      return false;
    }
    text.remove_prefix(n);
  }
  return true;
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const auto n = text::utf8_sequence(text);
    if (n == 0 || control(text, n)) {
      for (std::size_t i = 0; i < std::max<std::size_t>(n, 1); ++i) {
        out += "\\x" + text::hex(static_cast<unsigned char>(text[i]), 2);
      }
      text.remove_prefix(std::max<std::size_t>(n, 1));
      continue;
    }
    out.append(text.substr(0, n));
    text.remove_prefix(n);
  }
  return out;
}

std::string printable_head(std::string_view text, std::size_t most) {
  if (text.size() <= most) {
    return printable(text);
  }
  return printable(text.substr(0, most)) + "... (" + std::to_string(text.size()) + " bytes)";
}

}  // namespace vfready::model
