// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "vfready/model/cluster_configs.hpp"

// vfreadyctl's commands. Each returns the exit code that --help lists.
namespace vfready::ctl {

constexpr int kOk = 0;
constexpr int kFailed = 1;  // refused, failed, or (wait) the bring-up failed
constexpr int kUsage = 2;
constexpr int kNotRunning = 3;  // vfreadyd not reachable, and no status file
constexpr int kDenied = 4;
constexpr int kTimedOut = 5;  // wait: not ready in time

struct Where {
  std::string bus_address;  // "" for the system bus
  std::string status_file;
};

struct Output {
  bool json = false;             // --json: the same as format "json"
  std::string format = "table";  // -o: table, json or yaml
  bool vfs = false;
  bool colour = false;
};

int status(const Where& where, const Output& out);
int describe(const Where& where, const std::string& key, const Output& out);
int wait(const Where& where, double timeout_s);
// A pass over every PF (queued behind a running one); `wait_for_it`: until its outcome.
int reconcile(const Where& where, bool wait_for_it, double timeout_s);
// Returns once the new configuration is in force; `wait_for_pass`: once the pass that
// applies it has its outcome.
int reload(const Where& where, double timeout_s, bool wait_for_pass);
int render(const Where& where, const std::string& target,
           const model::ClusterConfigOptions& options);

}  // namespace vfready::ctl
