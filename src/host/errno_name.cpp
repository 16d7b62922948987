// SPDX-License-Identifier: Apache-2.0
#include "vfready/host/errno_name.hpp"

#include <cstring>

#include "vfready/host/stuck_call.hpp"

namespace vfready::host {

std::string errno_name(int err) {
  if (err == kStuck) {
    return "the call did not return within its deadline (the device is stuck)";
  }
  char buf[128];
  std::string text = strerror_r(err, buf, sizeof buf);  // GNU: returns the message
  if (const char* name = strerrorname_np(err)) {
    text += std::string(" (") + name + ")";
  }
  return text;
}

}  // namespace vfready::host
