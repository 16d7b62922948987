// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/json_writer.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <stdexcept>

namespace vfready::model {

namespace {

// The length of the valid UTF-8 sequence at the start of `s` (s non-empty, s[0] >=
// 0x80), 0 when it is not one: no overlong forms, no surrogates, nothing past U+10FFFF.
std::size_t utf8_sequence(std::string_view s) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto cont = [&](std::size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  const unsigned c = b(0);
  if (c >= 0xC2 && c <= 0xDF) {
    return cont(1) ? 2 : 0;
  }
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) {
      return 0;
    }
    const unsigned c1 = b(1);
    if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F)) {
      return 0;  // overlong, or a surrogate
    }
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) {
      return 0;
    }
    const unsigned c1 = b(1);
    if ((c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 > 0x8F)) {
      return 0;  // overlong, or past U+10FFFF
    }
    return 4;
  }
  return 0;
}

// The bytes a JSON string cannot hold as they are: controls, '"', '\\', and those of
// UTF-8 sequences (checked one by one). One look-up a byte.
constexpr std::array<bool, 256> kNotPlain = [] {
  std::array<bool, 256> out{};
  for (std::size_t c = 0; c < out.size(); ++c) {
    out.at(c) = c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
  }
  return out;
}();

bool not_plain(char c) { return kNotPlain.at(static_cast<unsigned char>(c)); }

}  // namespace

void JsonWriter::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (depth_ > 0) {
    const uint64_t bit = uint64_t{1} << static_cast<unsigned>(depth_ - 1);
    if ((written_ & bit) != 0) {
      out_ += ',';
    }
    written_ |= bit;
  }
}

void JsonWriter::open(char bracket) {
  if (depth_ == 64) {  // before the comma: the text is as it was when this throws
    throw std::length_error("JsonWriter: more than 64 containers open");
  }
  separate();
  out_ += bracket;
  written_ &= ~(uint64_t{1} << static_cast<unsigned>(depth_));
  ++depth_;
}

void JsonWriter::close(char bracket) {
  out_ += bracket;
  --depth_;
}

JsonWriter& JsonWriter::begin_object() {
  open('{');
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  close('}');
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  open('[');
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  close(']');
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  // Keys are names like "ifindex": written at once (comma, quotes and colon with it, in
  // one append) when nothing in them needs escaping, judged as they are copied.
  constexpr std::size_t kShort = 60;
  if (name.size() <= kShort && !after_key_) {
    std::array<char, kShort + 4> buf;  // NOLINT: filled below, as far as written
    const uint64_t bit = depth_ > 0 ? uint64_t{1} << static_cast<unsigned>(depth_ - 1) : 0;
    buf[0] = ',';
    std::size_t n = 1;
    buf[n++] = '"';
    bool plain = true;
    for (const char c : name) {
      buf[n++] = c;  // NOLINT: n < kShort + 2
      plain = plain && !not_plain(c);
    }
    if (plain) {
      buf[n++] = '"';
      buf[n++] = ':';
      const std::size_t from = (written_ & bit) != 0 ? 0 : 1;
      written_ |= bit;
      out_.append(buf.data() + from, n - from);
      after_key_ = true;
      return *this;
    }
  }
  value(name);  // escaped as a value is (with its comma)
  out_ += ':';
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  separate();
  static constexpr char kHex[] = "0123456789abcdef";
  out_ += '"';
  std::size_t i = 0;
  while (i < text.size()) {
    // The run of bytes that need nothing, copied at once.
    std::size_t plain = i;
    while (plain < text.size() && !not_plain(text[plain])) {
      ++plain;
    }
    out_.append(text.data() + i, plain - i);
    i = plain;
    if (i == text.size()) {
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const auto n = utf8_sequence(text.substr(i));
      if (n == 0) {
        out_ += "\xEF\xBF\xBD";  // U+FFFD for the byte
        ++i;
      } else {
        out_.append(text.data() + i, n);
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"':
        out_ += "\\\"";
        break;
      case '\\':
        out_ += "\\\\";
        break;
      case '\b':
        out_ += "\\b";
        break;
      case '\f':
        out_ += "\\f";
        break;
      case '\n':
        out_ += "\\n";
        break;
      case '\r':
        out_ += "\\r";
        break;
      case '\t':
        out_ += "\\t";
        break;
      default:
        out_ += "\\u00";
        out_ += kHex[c >> 4];
        out_ += kHex[c & 0xF];
    }
    ++i;
  }
  out_ += '"';
  return *this;
}

template <typename Integer>
JsonWriter& JsonWriter::integer(Integer number) {
  separate();
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, number);
  out_.append(buf, r.ptr);
  return *this;
}

JsonWriter& JsonWriter::value(int64_t number) { return integer(number); }

JsonWriter& JsonWriter::value(uint64_t number) { return integer(number); }

JsonWriter& JsonWriter::value(bool b) {
  separate();
  out_ += b ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::null() {
  separate();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::text_or_null(std::string_view text) {
  return text.empty() ? null() : value(text);
}

JsonWriter& JsonWriter::raw(std::string_view json) {
  separate();
  out_ += json;
  return *this;
}

JsonWriter& JsonWriter::strings(const std::vector<std::string>& list) {
  begin_array();
  for (const auto& s : list) {
    value(s);
  }
  return end_array();
}

}  // namespace vfready::model
