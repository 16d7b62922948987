// SPDX-License-Identifier: Apache-2.0
// What vfreadyd does with the signals it takes (Service::run blocks them and reads them
// through the loop): stop, reload, and the strays it logs and ignores.
#include <signal.h>
#include <unistd.h>

#include <string>

#include "log.hpp"
#include "service.hpp"

namespace vfready::daemon {

void Service::on_signal(int signo) {
  switch (signo) {
    case SIGHUP:
      reload([](const std::optional<std::string>& refused) {
        if (refused) {
          log::error({}, "reload: " + *refused);
        }
      });
      return;
    case SIGUSR2:
      if (options_.stall_on_sigusr2) {
        log::warn({}, "SIGUSR2: stalling the event loop on purpose (--debug-stall-on-sigusr2)");
        notifier_.notify("STATUS=Event loop stalled on purpose (SIGUSR2)");
        for (;;) {
          pause();
        }
      }
      return;
    case SIGUSR1:
    case SIGALRM:
      log::info({}, std::string("signal ") + (signo == SIGUSR1 ? "SIGUSR1" : "SIGALRM") +
                        ": ignored (SIGHUP reloads the configuration, SIGTERM stops)");
      return;
    default:
      log::info({}, "signal " + std::to_string(signo) +
                        ": stopping; VFs, names and GUIDs stay as they are");
      notifier_.notify("STOPPING=1");
      quit(options_.once ? 1 : 0);  // --once: interrupted before its outcome
  }
}

}  // namespace vfready::daemon
