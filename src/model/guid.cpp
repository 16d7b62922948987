// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/guid.hpp"

#include <algorithm>

#include "text.hpp"

namespace vfready::model {

Result<Guid> Guid::parse(std::string_view text) {
  // As the kernel and vfready write them (every read of a VF's GUID): one walk.
  if (const auto quick = text::grouped_hex(text, 8, 2)) {
    return Guid(*quick);
  }
  if (const auto quick = text::grouped_hex(text, 4, 4)) {
    return Guid(*quick);
  }
  const auto groups = std::count(text.begin(), text.end(), ':') + 1;
  std::size_t width = 0;
  if (groups == 8) {
    width = 2;
  } else if (groups == 4) {
    width = 4;
  } else {
    return Error{"invalid GUID " + text::quote(text) +
                 ": expected eight colon-separated bytes (02:00:00:00:00:00:00:01) or four "
                 "colon-separated 16-bit groups (0200:0000:0000:0001)"};
  }
  uint64_t value = 0;
  std::string_view rest = text;
  for (auto g = groups; g > 0; --g) {
    const auto colon = rest.find(':');
    const auto part = rest.substr(0, colon);
    rest.remove_prefix(colon == std::string_view::npos ? rest.size() : colon + 1);
    auto group = text::parse_uint(part, 16, (uint64_t{1} << (width * 4)) - 1);
    if (!group || part.size() != width) {
      return Error{"invalid GUID " + text::quote(text) + ": group " + text::quote(part) +
                   " is not " + std::to_string(width) + " hex digits"};
    }
    value = (value << (width * 4)) | *group;
  }
  return Guid(value);
}

namespace {

// The GUID in `groups` groups of `width` hex digits, colon-separated.
ShortText grouped(uint64_t value, int groups, int width) {
  const auto step = static_cast<std::size_t>(width) + 1;
  ShortText out;
  out.set_size((static_cast<std::size_t>(groups) * step) - 1);  // 23 or 19 characters
  for (int g = 0; g < groups; ++g) {
    const int shift = (groups - 1 - g) * width * 4;
    char* at = out.data() + (static_cast<std::size_t>(g) * step);
    text::put_hex(at, value >> shift, width);
    at[width] = ':';  // NOLINT: the last group's lands past the size, within the room
  }
  return out;
}

}  // namespace

std::string Guid::str() const { return grouped(value_, 8, 2).str(); }

ShortText Guid::text() const { return grouped(value_, 8, 2); }

std::string Guid::sysfs_str() const { return grouped(value_, 4, 4).str(); }

const char* to_string(GuidPolicy policy) {
  switch (policy) {
    case GuidPolicy::kUp:
      return "Up";
    case GuidPolicy::kDown:
      return "Down";
    case GuidPolicy::kFollow:
      break;
  }
  return "Follow";
}

}  // namespace vfready::model
