// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

// The one parser of udevd's messages to its monitors (netlink group 2): a header that
// starts "libudev", then the device's properties as KEY=value strings, each ended by a
// NUL. Pure: bytes in, a netdev event out; it trusts nothing of the message (offsets and
// lengths are checked against the bytes given). Who sent it is the receiver's to check.
//
// libudev's own receive builds a device object of every property of every message
// (some 23,000 instructions a message under callgrind); vfready needs four of them.
namespace vfready::host {

// A netdev event from udev.
struct UdevNetdevEvent {
  std::string action;  // "add", "move", "remove", ...
  int ifindex = 0;
  std::string name;     // the netdev's name: the last part of its DEVPATH
  std::string devpath;  // "/devices/pci0000:00/.../0000:10:00.1/net/ib0"
};

// `message`: one datagram as received. nullopt when it is not udevd's (no "libudev"
// prefix, the wrong magic, properties outside the bytes or not each ended by a NUL),
// lacks what udevd always sends (ACTION, DEVPATH, SUBSYSTEM, SEQNUM) or gives one that
// systemd would refuse, or is not a netdev's (SUBSYSTEM other than "net", no IFINDEX
// above 0). Properties vfready does not read are not looked into.
std::optional<UdevNetdevEvent> parse_udev_message(std::span<const uint8_t> message);

}  // namespace vfready::host
