// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include "vfready/host/notifier.hpp"
#include "vfready/model/compat_table.hpp"
#include "vfready/model/config.hpp"
#include "vfready/model/status.hpp"

// One bring-up of every configured PF: the driver check, then each PF on a worker
// thread of its own, all at once, while this thread watches their progress, their
// deadlines and the signals, and tells systemd.
namespace vfready::daemon {

struct HostRoots {
  std::string sysfs = "/sys";
  std::string proc = "/proc";
  std::string kernel_log = "/dev/kmsg";
  std::string udev_run = "/run/udev";
};

struct BringupResult {
  model::Outcome outcome = model::Outcome::kFailed;
  bool ready_sent = false;
  bool interrupted = false;  // SIGTERM/SIGINT came first
  std::vector<std::string> driver_failures;
  std::vector<model::PfStatus> pfs;
};

BringupResult run_bringup(const model::Config& config, const model::CompatTable& table,
                          const HostRoots& roots, host::Notifier& notifier, int signal_fd);

// Prints the plan (--check-config): what would be written, renamed and assigned.
int print_plan(const model::Config& config, const model::CompatTable& table,
               const HostRoots& roots);

// The final state as a table a person reads.
void print_summary(const BringupResult& result);

}  // namespace vfready::daemon
