// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>

// One read or write of a file that can wait on a device lock, and its answer.
namespace vfready::host {

struct DeviceOp {
  // kNetlink: one rtnetlink request (its bytes in `value`), sent by the helper on a
  // NETLINK_ROUTE socket of its own in the daemon's namespace. The kernel serves link
  // requests under rtnl_lock, which a driver may hold as long as it holds its device.
  enum class Kind : uint8_t { kRead, kWrite, kNetlink };
  Kind kind = Kind::kRead;
  // A file: absolute (relative to a Sysfs's root when given to on_device). For kNetlink,
  // what the request does ("rename of ifindex 7 to ib0v3"), for the text of a stuck call.
  std::string path;
  std::string value;  // what a write writes; the request's bytes
  // A file written again and again (drivers_probe): the helper keeps it open for the
  // next write (pwrite at 0), which saves an open and a close a call.
  bool keep_open = false;
};

struct DeviceOpResult {
  int err = 0;  // 0, the errno of the call (for kNetlink, the kernel's answer), or kStuck
  // What a read gave, without its trailing newline. For kNetlink, the link the kernel
  // answered (RTM_NEWLINK: its header, ifinfomsg, and its name, MTU and altnames only),
  // or nothing for an acknowledged request.
  std::string text;
};

}  // namespace vfready::host
