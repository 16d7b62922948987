// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <optional>
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
  // The watchdog interval systemd expects pings within, if it watches this process.
  virtual std::optional<std::chrono::microseconds> watchdog() = 0;
};

// The real notifier, over libsystemd's sd_notify and sd_watchdog_enabled.
class SystemdNotifier final : public Notifier {
 public:
  bool notify(std::string_view assignments) override;
  std::optional<std::chrono::microseconds> watchdog() override;
};

}  // namespace vfready::host
