// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/guid.hpp"

#include <vector>

#include "text.hpp"

namespace vfready::model {

namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const auto pos = text.find(sep, start);
    parts.push_back(text.substr(start, pos - start));
    if (pos == std::string_view::npos) {
      return parts;
    }
    start = pos + 1;
  }
}

}  // namespace

Result<Guid> Guid::parse(std::string_view text) {
  const auto parts = split(text, ':');
  std::size_t width = 0;
  if (parts.size() == 8) {
    width = 2;
  } else if (parts.size() == 4) {
    width = 4;
  } else {
    return Error{"invalid GUID " + text::quote(text) +
                 ": expected eight colon-separated bytes (02:00:00:00:00:00:00:01) or four "
                 "colon-separated 16-bit groups (0200:0000:0000:0001)"};
  }
  uint64_t value = 0;
  for (const auto part : parts) {
    auto group = text::parse_uint(part, 16, (uint64_t{1} << (width * 4)) - 1);
    if (!group || part.size() != width) {
      return Error{"invalid GUID " + text::quote(text) + ": group " + text::quote(part) +
                   " is not " + std::to_string(width) + " hex digits"};
    }
    value = (value << (width * 4)) | *group;
  }
  return Guid(value);
}

std::string Guid::str() const {
  std::string out;
  for (int shift = 56; shift >= 0; shift -= 8) {
    out += text::hex(value_ >> shift, 2);
    if (shift != 0) {
      out += ':';
    }
  }
  return out;
}

std::string Guid::sysfs_str() const {
  std::string out;
  for (int shift = 48; shift >= 0; shift -= 16) {
    out += text::hex(value_ >> shift, 4);
    if (shift != 0) {
      out += ':';
    }
  }
  return out;
}

}  // namespace vfready::model
