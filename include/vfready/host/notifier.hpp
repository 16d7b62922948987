// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>

namespace vfready::host {

// Service manager notifications (sd_notify). Without $NOTIFY_SOCKET every call is a
// no-op, so the daemon runs the same under systemd, in tests and by hand.
class Notifier {
 public:
  virtual ~Notifier() = default;
  // Sends newline-separated KEY=VALUE assignments in one datagram.
  // Returns false when the datagram could not be sent.
  virtual bool notify(std::string_view assignments) = 0;
};

// The real notifier, over libsystemd's sd_notify. (The watchdog is fed by the event
// loop: EventLoop::feed_watchdog.)
class SystemdNotifier final : public Notifier {
 public:
  bool notify(std::string_view assignments) override;
};

}  // namespace vfready::host
