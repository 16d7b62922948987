// SPDX-License-Identifier: Apache-2.0
// The one file that speaks to systemd through libsystemd: notifications, the watchdog
// and the journal.
#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "vfready/host/journal.hpp"
#include "vfready/host/notifier.hpp"

namespace vfready::host {

bool SystemdNotifier::notify(std::string_view assignments) {
  const std::string message(assignments);
  // 0 means "no NOTIFY_SOCKET": not an error.
  return sd_notify(0, message.c_str()) >= 0;
}

std::optional<std::chrono::microseconds> SystemdNotifier::watchdog() {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
    return std::chrono::microseconds(usec);
  }
  return std::nullopt;
}

bool SystemdJournal::send(const std::vector<std::string>& fields) {
  std::vector<iovec> iov;
  iov.reserve(fields.size());
  for (const auto& f : fields) {
    // sd_journal_sendv does not write through iov_base.
    iov.push_back(
        {const_cast<char*>(f.data()), f.size()});  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  }
  return sd_journal_sendv(iov.data(), static_cast<int>(iov.size())) >= 0;
}

bool stderr_is_journal() {
  const char* stream = std::getenv("JOURNAL_STREAM");  // NOLINT(concurrency-mt-unsafe)
  if (stream == nullptr) {
    return false;
  }
  unsigned long long dev = 0;
  unsigned long long ino = 0;
  if (std::sscanf(stream, "%llu:%llu", &dev, &ino) != 2) {  // NOLINT(cert-err34-c)
    return false;
  }
  struct stat st {};
  return fstat(STDERR_FILENO, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

}  // namespace vfready::host
