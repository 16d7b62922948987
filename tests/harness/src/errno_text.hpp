// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstring>
#include <string>

namespace vfready::fakehost {

// strerror() is not thread-safe; the fake host is all threads.
inline std::string errno_text(int err) {
  char buf[128];
  return strerror_r(err, buf, sizeof buf);  // GNU strerror_r returns the message
}

}  // namespace vfready::fakehost
