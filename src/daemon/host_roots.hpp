// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

namespace vfready::daemon {

// Where the daemon finds the host: the real one, or a fake host's tree in tests.
struct HostRoots {
  std::string sysfs = "/sys";
  std::string proc = "/proc";
  std::string kernel_log = "/dev/kmsg";
};

}  // namespace vfready::daemon
