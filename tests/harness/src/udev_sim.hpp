// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "scheduler.hpp"

// Plays udevd's part that vfready watches: a new netdev is "initialized" a while after
// it appears, when its database file run/udev/data/n<ifindex> is written (to a
// temporary name, then renamed, as udevd does); run/udev/queue exists while any
// device is still pending. Plain files on disk, so inotify works on them.
namespace vfready::fakehost {

class UdevSim {
 public:
  UdevSim(std::string run_dir, std::chrono::milliseconds latency, Scheduler& scheduler);

  // A netdev appeared: it becomes initialized after the latency.
  void add(int ifindex, const std::string& driver);
  // A netdev appeared at boot: initialized at once.
  void add_initialized(int ifindex, const std::string& driver);
  // A netdev went away: its database file goes too.
  void remove(int ifindex);

 private:
  void finish(int ifindex, const std::string& driver, unsigned generation);
  void write_db(int ifindex, const std::string& driver) const;
  void update_queue_file() const;  // call with mu_ held
  [[nodiscard]] std::string db_path(int ifindex) const;

  std::string run_dir_;
  std::chrono::milliseconds latency_;
  Scheduler& scheduler_;
  std::mutex mu_;
  // ifindex -> generation of the pending add, so a stale timer of a removed netdev
  // whose ifindex came back does not mark the new one early.
  std::map<int, unsigned> pending_;
  unsigned generation_ = 0;
};

}  // namespace vfready::fakehost
