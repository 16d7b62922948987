// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/version.hpp"

#include <algorithm>

#include "text.hpp"

namespace vfready::model {

namespace {

bool is_separator(char c) { return c == '.' || c == '-'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Result<Version> Version::parse(std::string_view text) {
  std::vector<uint64_t> parts;
  std::size_t i = 0;
  while (true) {
    std::size_t j = i;
    while (j < text.size() && !is_separator(text[j])) {
      ++j;
    }
    auto part = text::parse_uint(text.substr(i, j - i), 10, UINT64_MAX);
    if (!part) {
      return Error{"invalid version " + text::quote(text) +
                   ": expected decimal numbers separated by '.' or '-' (e.g. 28.43.1014, "
                   "24.10-0.7.0)"};
    }
    parts.push_back(*part);
    if (j == text.size()) {
      break;
    }
    i = j + 1;
  }
  return Version(std::move(parts), std::string(text));
}

Result<Version> Version::parse_prefix(std::string_view text) {
  std::size_t end = 0;
  // Take components while each is all digits and is followed by a separator or the end.
  std::size_t i = 0;
  while (i < text.size() && is_digit(text[i])) {
    std::size_t j = i;
    while (j < text.size() && is_digit(text[j])) {
      ++j;
    }
    if (j < text.size() && !is_separator(text[j])) {
      break;
    }
    end = j;
    i = j + 1;
  }
  if (end == 0) {
    return Error{"invalid version " + text::quote(text) +
                 ": does not start with a decimal number (e.g. 6.8.0-55-generic)"};
  }
  auto parsed = parse(text.substr(0, end));
  if (!parsed) {
    return parsed.error();
  }
  return Version(parsed.value().components(), std::string(text));
}

std::strong_ordering operator<=>(const Version& a, const Version& b) {
  const auto n = std::max(a.parts_.size(), b.parts_.size());
  for (std::size_t i = 0; i < n; ++i) {
    const uint64_t x = i < a.parts_.size() ? a.parts_[i] : 0;
    const uint64_t y = i < b.parts_.size() ? b.parts_[i] : 0;
    if (auto c = x <=> y; std::is_neq(c)) {
      return c;
    }
  }
  return std::strong_ordering::equal;
}

}  // namespace vfready::model
