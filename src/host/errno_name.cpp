// SPDX-License-Identifier: Apache-2.0
#include "vfready/host/errno_name.hpp"

#include <cstring>

#include "vfready/host/stuck_call.hpp"

namespace vfready::host {

std::string errno_name(int err) {
  if (err == kStuck) {
    return "the call did not return within its deadline (the device is stuck)";
  }
  if (err == kHelperGone) {
    return "vfready's helper process making the call died before it answered (killed?), "
           "not the driver: the PF is brought up again";
  }
  char buf[128];
  std::string text = strerror_r(err, buf, sizeof buf);  // GNU: returns the message
  if (const char* name = strerrorname_np(err)) {
    text += std::string(" (") + name + ")";
  }
  return text;
}

}  // namespace vfready::host
