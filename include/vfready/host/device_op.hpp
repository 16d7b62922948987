// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>

// One read or write of a file that can wait on a device lock, and its answer.
namespace vfready::host {

struct DeviceOp {
  enum class Kind : uint8_t { kRead, kWrite };
  Kind kind = Kind::kRead;
  std::string path;   // absolute (relative to a Sysfs's root when given to on_device)
  std::string value;  // what a write writes
  // A file written again and again (drivers_probe): the helper keeps it open for the
  // next write (pwrite at 0), which saves an open and a close a call.
  bool keep_open = false;
};

struct DeviceOpResult {
  int err = 0;       // 0, the errno of the call, or kStuck
  std::string text;  // what a read gave, without its trailing newline
};

}  // namespace vfready::host
