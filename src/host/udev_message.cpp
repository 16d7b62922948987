// SPDX-License-Identifier: Apache-2.0
// What a udevd message must be is systemd's: device_monitor_receive_device() (the
// header), device_new_from_nulstr() and device_verify() (the properties),
// src/libsystemd/sd-device/device-monitor.c and device-private.c.
#include "vfready/host/udev_message.hpp"

#include <array>
#include <charconv>
#include <cstring>
#include <string_view>

namespace vfready::host {

namespace {

constexpr std::string_view kPrefix{"libudev\0", 8};
constexpr uint32_t kMagic = 0xfeedcafe;  // sent in network order
// The header's size as udevd sends it; a message this short is refused whatever it says.
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

struct Properties {
  std::string_view action, devpath, subsystem, seqnum, ifindex;
};

// KEY=value strings, each ended by a NUL; a value is cut at a newline (some drivers
// send one). False when one is not ended, or has no '='.
bool read_properties(std::string_view text, Properties& p) {
  while (!text.empty()) {
    const auto end = text.find('\0');
    if (end == std::string_view::npos) {
      return false;
    }
    auto entry = text.substr(0, end);
    text.remove_prefix(end + 1);
    entry = entry.substr(0, entry.find('\n'));
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) {
      return false;
    }
    const auto key = entry.substr(0, eq);
    const auto value = entry.substr(eq + 1);
    if (key == "ACTION") {
      p.action = value;
    } else if (key == "DEVPATH") {
      p.devpath = value;
    } else if (key == "SUBSYSTEM") {
      p.subsystem = value;
    } else if (key == "SEQNUM") {
      p.seqnum = value;
    } else if (key == "IFINDEX") {
      p.ifindex = value;
    }
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
  const auto seqnum = whole_number<uint64_t>(p.seqnum);
  // A DEVPATH is under /sys; its last part is the device's name.
  const auto slash = p.devpath.rfind('/');
  if (!known_action(p.action) || !p.devpath.starts_with('/') || p.subsystem.empty() || !seqnum ||
      *seqnum == 0 || slash + 1 == p.devpath.size()) {
    return std::nullopt;
  }
  const auto ifindex = whole_number<int>(p.ifindex);
  if (p.subsystem != "net" || !ifindex || *ifindex <= 0) {
    return std::nullopt;
  }
  UdevNetdevEvent e;
  e.action = p.action;
  e.ifindex = *ifindex;
  e.name = p.devpath.substr(slash + 1);
  e.devpath = p.devpath;
  return e;
}

}  // namespace vfready::host
