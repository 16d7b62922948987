// SPDX-License-Identifier: Apache-2.0
#include <systemd/sd-daemon.h>

#include <string>

#include "vfready/host/notifier.hpp"

namespace vfready::host {

bool SystemdNotifier::notify(std::string_view assignments) {
  const std::string message(assignments);
  // 0 means "no NOTIFY_SOCKET": not an error.
  return sd_notify(0, message.c_str()) >= 0;
}

}  // namespace vfready::host
