// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "scheduler.hpp"
#include "udev_messages.hpp"
#include "udev_names.hpp"

// Plays udevd's part toward libudev: a new netdev is handled a while after it appears.
// Then, as udevd's event for it (src/udev/udev-event.c, udev_event_execute_rules): its
// rules name it; where that is a rename, its database file run/udev/data/n<ifindex> is
// written with ID_RENAMING=1 first (rename_netif(), udevd 250 on), then the rename
// (the kernel's makes a "move") and the altnames; the database is written again (to a
// temporary name, then renamed) and the "add" message goes to the monitors, then the
// "move" of that rename, which udevd handles after the add: it drops ID_RENAMING. A
// later rename sends "move".
// run/udev/queue exists while any device is still pending, and run/udev/control always
// (libudev's monitors listen only where udevd runs).
namespace vfready::fakehost {

class UdevSim {
 public:
  // `announces` false: the database is written, but no add message is sent. `running`
  // false: udevd is not running (no control socket) until start().
  UdevSim(std::string run_dir, std::chrono::milliseconds latency, Scheduler& scheduler,
          UdevMessages& messages, bool announces = true, bool running = true);
  // udevd starts: its control socket appears.
  void start() const;

  // A netdev as a message names it: its sysfs path ("/devices/.../net/ibp24s0v3") and
  // its name, nullopt when it is gone.
  struct Netdev {
    std::string devpath;
    std::string name;
  };
  // How to find a netdev's path and name when its event is sent. Set once, before use.
  void set_describe(std::function<std::optional<Netdev>(int ifindex)> describe) {
    describe_ = std::move(describe);
  }
  // What udevd's rules make of a new netdev (rename, altnames), and doing it. Set once,
  // before use.
  void set_naming(std::function<UdevNaming(int ifindex)> rules,
                  std::function<void(int ifindex, const UdevNaming&)> apply) {
    rules_ = std::move(rules);
    apply_ = std::move(apply);
  }
  // How long its worker takes between the database with ID_RENAMING=1 and the rename.
  void set_renaming_window(std::chrono::milliseconds window) { renaming_window_ = window; }

  // A netdev appeared: it becomes initialized after the latency.
  void add(int ifindex, const std::string& driver);
  // A netdev appeared at boot: initialized at once.
  void add_initialized(int ifindex, const std::string& driver);
  // A netdev went away: its database file goes too.
  void remove(int ifindex);
  // A netdev was renamed (it was at `old_devpath`).
  void moved(int ifindex, const std::string& old_devpath);
  // udevd behind: the add of a netdev that is gone by now (`netdev` as it was), sent
  // as udevd sends an event whose device went away while it waited in the queue.
  void late_add(int ifindex, const Netdev& netdev, const std::string& driver);

 private:
  void finish(int ifindex, const std::string& driver, unsigned generation);
  // The add's rename done (where its rules chose one), and the rest of the add.
  void complete(int ifindex, const std::string& driver, unsigned generation,
                const UdevNaming& naming);
  [[nodiscard]] bool pending(int ifindex, unsigned generation);
  void write_db(int ifindex, const std::string& driver, bool renaming = false) const;
  void update_queue_file() const;  // call with mu_ held
  [[nodiscard]] std::string db_path(int ifindex) const;

  void announce(const std::string& action, int ifindex, const std::string& driver,
                const std::string& old_devpath = {});
  // The message udevd sends for `netdev`.
  void send(const std::string& action, int ifindex, const Netdev& netdev, const std::string& driver,
            const std::string& old_devpath = {});

  std::string run_dir_;
  std::chrono::milliseconds latency_;
  Scheduler& scheduler_;
  UdevMessages& messages_;
  bool announces_ = true;
  std::function<std::optional<Netdev>(int)> describe_;
  std::function<UdevNaming(int)> rules_;
  std::function<void(int, const UdevNaming&)> apply_;
  std::chrono::milliseconds renaming_window_{0};
  // Held while an add and the move of udevd's own rename go out, so that a move seen
  // meanwhile goes after them.
  std::mutex order_mu_;
  std::mutex mu_;
  // Moves of netdevs udevd has not handled yet (the add pending, or its rules running),
  // by ifindex, in order: udevd handles a device's events one after another, so they go
  // out after its add (old devpaths).
  std::map<int, std::vector<std::string>> held_moves_;
  // ifindex -> generation of the pending add, so a stale timer of a removed netdev
  // whose ifindex came back does not mark the new one early.
  std::map<int, unsigned> pending_;
  unsigned generation_ = 0;
};

}  // namespace vfready::fakehost
