// SPDX-License-Identifier: Apache-2.0
// What a udevd message must be is systemd's: device_monitor_receive_device() (the
// header), device_new_from_nulstr() and device_verify() (the properties),
// src/libsystemd/sd-device/device-monitor.c and device-private.c.
#include "vfready/host/udev_message.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <string_view>
#include <utility>

namespace vfready::host {

namespace {

constexpr std::string_view kPrefix{"libudev\0", 8};
constexpr uint32_t kMagic = 0xfeedcafe;  // sent in network order
// The shortest message sd-device's monitor takes (its header is 40 bytes): shorter ones
// are refused whatever they say, and properties_off leaves at least as many bytes.
constexpr std::size_t kMinimum = 32;
constexpr std::size_t kMagicAt = 8;
constexpr std::size_t kPropertiesOffAt = 16;

uint32_t big_endian_at(std::span<const uint8_t> bytes, std::size_t at) {
  return (uint32_t{bytes[at]} << 24U) | (uint32_t{bytes[at + 1]} << 16U) |
         (uint32_t{bytes[at + 2]} << 8U) | uint32_t{bytes[at + 3]};
}

uint32_t native_at(std::span<const uint8_t> bytes, std::size_t at) {
  uint32_t out = 0;
  std::memcpy(&out, bytes.data() + at, sizeof out);
  return out;
}

// What udevd's actions are (device_action_table): any other is refused.
bool known_action(std::string_view a) {
  constexpr std::array<std::string_view, 8> kActions = {"add",    "remove",  "change", "move",
                                                        "online", "offline", "bind",   "unbind"};
  for (const auto known : kActions) {
    if (a == known) {
      return true;
    }
  }
  return false;
}

// A decimal number, whole: nullopt for anything else.
template <class T>
std::optional<T> whole_number(std::string_view text) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
    return std::nullopt;
  }
  return value;
}

// DEVPATH as path_simplify() leaves it: doubled slashes one, "." parts and a trailing
// slash gone. One walk over the bytes, written in place.
std::string simplified(std::string_view path) {
  std::string out(path.size() + 1, '\0');  // each part gains at most its one '/'
  std::size_t n = 0;
  std::size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') {
      ++i;
    }
    std::size_t j = i;
    while (j < path.size() && path[j] != '/') {
      ++j;
    }
    const auto part = path.substr(i, j - i);
    if (!part.empty() && part != ".") {
      out[n++] = '/';
      std::copy(part.begin(), part.end(), out.begin() + static_cast<std::ptrdiff_t>(n));
      n += part.size();
    }
    i = j;
  }
  out.resize(n);
  return out;
}

struct Properties {
  std::string_view action, subsystem, ifindex;
  std::string devpath;
  bool seqnum = false;  // a SEQNUM above 0 was given
};

// One KEY=value, checked as device_amend() checks it (each time it is given): a known
// ACTION, a DEVPATH under '/', a SEQNUM and an IFINDEX above 0 (decimal numbers, as udevd
// writes them). False when it is not.
bool take(std::string_view key, std::string_view value, Properties& p) {
  if (key == "ACTION") {
    p.action = value;
    return known_action(value);
  }
  if (key == "DEVPATH") {
    p.devpath = simplified(value);
    return value.starts_with('/') && !p.devpath.empty();
  }
  if (key == "SUBSYSTEM") {
    p.subsystem = value;
  } else if (key == "SEQNUM") {
    const auto n = whole_number<uint64_t>(value);
    p.seqnum = n && *n > 0;
    return p.seqnum;
  } else if (key == "IFINDEX") {
    const auto n = whole_number<int>(value);
    p.ifindex = value;
    return n && *n > 0;
  }
  return true;
}

// Whether take() reads the property `key` (by its length first: most are not).
bool read_by_take(std::string_view key) {
  switch (key.size()) {
    case 6:
      return key == "ACTION" || key == "SEQNUM";
    case 7:
      return key == "DEVPATH" || key == "IFINDEX";
    case 9:
      return key == "SUBSYSTEM";
    default:
      return false;
  }
}

// KEY=value strings, each ended by a NUL; an entry is cut at a newline or carriage
// return (truncate_nl(): some drivers send one). False when one is not ended, has no
// '=' before such a cut, or is refused (take()). Properties vfready does not read are
// not looked into further.
constexpr std::array<bool, 256> kEndsKey = [] {
  std::array<bool, 256> ends{};
  for (const char c : {'=', '\n', '\r', '\0'}) {
    ends.at(static_cast<unsigned char>(c)) = true;
  }
  return ends;
}();

bool read_properties(std::string_view text, Properties& p) {
  const char* at = text.data();
  const char* const end = at + text.size();
  while (at < end) {
    const auto* nul =
        static_cast<const char*>(std::memchr(at, '\0', static_cast<std::size_t>(end - at)));
    if (nul == nullptr) {
      return false;
    }
    // The key, up to its '=': a cut in it leaves the entry without one (keys are short:
    // a walk over their bytes, to the first that ends a key; the entry's NUL is one).
    const char* eq = at;
    while (!kEndsKey[static_cast<unsigned char>(*eq)]) {
      ++eq;
    }
    if (*eq != '=') {
      return false;
    }
    const std::string_view key(at, static_cast<std::size_t>(eq - at));
    if (read_by_take(key)) {
      // Two memchr() scans, many bytes a step: find_first_of("\n\r") asks memchr for
      // each byte, a loop over the bytes takes a few instructions for each.
      auto value = std::string_view(eq + 1, static_cast<std::size_t>(nul - eq - 1));
      value = value.substr(0, std::min(value.find('\n'), value.find('\r')));
      if (!take(key, value, p)) {
        return false;
      }
    }
    at = nul + 1;
  }
  return true;
}

}  // namespace

std::optional<UdevNetdevEvent> parse_udev_message(std::span<const uint8_t> message) {
  if (message.size() < kMinimum ||
      std::string_view(reinterpret_cast<const char*>(message.data()), kPrefix.size()) != kPrefix ||
      big_endian_at(message, kMagicAt) != kMagic) {
    return std::nullopt;
  }
  const std::size_t off = native_at(message, kPropertiesOffAt);
  if (off > message.size() - kMinimum) {
    return std::nullopt;
  }
  Properties p;
  const auto rest = message.subspan(off);
  if (!read_properties({reinterpret_cast<const char*>(rest.data()), rest.size()}, p)) {
    return std::nullopt;
  }
  // What device_verify() requires; then a netdev's.
  if (p.action.empty() || p.devpath.empty() || p.subsystem.empty() || !p.seqnum ||
      p.subsystem != "net" || p.ifindex.empty()) {
    return std::nullopt;
  }
  UdevNetdevEvent e;
  e.action = p.action;
  e.ifindex = *whole_number<int>(p.ifindex);            // checked as it was read
  e.name = p.devpath.substr(p.devpath.rfind('/') + 1);  // the device's name
  e.devpath = std::move(p.devpath);
  return e;
}

}  // namespace vfready::host
