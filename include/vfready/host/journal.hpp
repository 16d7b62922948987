// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

namespace vfready::host {

// The systemd journal's native protocol: one entry of "KEY=value" fields.
class Journal {
 public:
  virtual ~Journal() = default;
  // Returns false when the entry could not be sent.
  virtual bool send(const std::vector<std::string>& fields) = 0;
};

// The real journal, over libsystemd's sd_journal_sendv.
class SystemdJournal final : public Journal {
 public:
  bool send(const std::vector<std::string>& fields) override;
};

// Whether stderr is connected to the journal: $JOURNAL_STREAM names its device and inode.
bool stderr_is_journal();

// Whether journald listens on its native socket (/run/systemd/journal/socket).
bool journal_reachable();

}  // namespace vfready::host
