// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bringup.hpp"
#include "drift.hpp"
#include "event_loop.hpp"
#include "host_roots.hpp"
#include "vfready/bus/bus.hpp"
#include "vfready/host/links.hpp"
#include "vfready/host/notifier.hpp"
#include "vfready/host/sysfs.hpp"
#include "vfready/host/udev_wait.hpp"

// vfreadyd as a service: the loop with its sources (signals, the bring-up, the bus,
// the watchdog), and what happens on each.
namespace vfready::daemon {

struct ServiceOptions {
  std::string config_path;
  std::vector<std::string> compat_paths;
  HostRoots roots;
  bool once = false;
  std::optional<std::string> bus_address;  // nullopt: no bus; "": the system bus
  bool stall_on_sigusr2 = false;           // a test hook: wedge the loop on SIGUSR2
};

class Service {
 public:
  Service(ServiceOptions options, BringupInputs inputs, host::Notifier& notifier);
  ~Service();
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  // Runs until SIGTERM (or, with `once`, until the bring-up's outcome). Returns the exit
  // code: 0 ready, 1 not.
  int run();
  [[nodiscard]] const model::DaemonStatus& status() const { return status_; }

 private:
  void start_bringup(std::set<std::string> only = {});
  void watch();
  void on_link_events();
  void on_udev_events();
  // What an event means now, judged against the link as it is and the last status.
  std::optional<Drift> judge_link_event(const host::LinkEvent& event);
  std::optional<Drift> judge_new_netdev(int ifindex);
  // Drift on a PF whose pass is running is judged again when the pass ends: the pass may
  // have read the PF before the change (a VF rebound while the pass looked at it).
  void on_drift(const Drift& drift, const std::function<std::optional<Drift>()>& judge_again);
  void schedule_pass();
  void on_bringup_finished();
  void on_signal();
  std::optional<std::string> reconcile();
  std::optional<std::string> reload();
  void connect_bus();
  void publish();
  void arm_watchdog();

  ServiceOptions options_;
  BringupInputs inputs_;
  host::Notifier& notifier_;
  EventLoop loop_;
  Clock::time_point epoch_ = Clock::now();
  model::DaemonStatus status_;
  std::shared_ptr<BusyPfs> busy_ = std::make_shared<BusyPfs>();
  // Names are node-wide and outlive passes: one registry for the daemon's life.
  std::shared_ptr<pipeline::NameRegistry> names_ = std::make_shared<pipeline::NameRegistry>();
  std::shared_ptr<Bringup> bringup_;
  EventLoop::Id bringup_id_ = 0;
  std::unique_ptr<bus::Server> bus_;
  EventLoop::Id bus_id_ = 0;
  std::chrono::seconds bus_retry_{1};
  int signal_fd_ = -1;
  // Watching for drift once the first bring-up is done.
  std::unique_ptr<host::LinkMonitor> monitor_;
  std::unique_ptr<host::UdevNetdevWatch> udev_watch_;
  std::unique_ptr<host::NetlinkLinks> links_;
  std::set<std::string> dirty_;  // PFs a reconcile pass should look at
  // Events that came during a pass of their PF, to judge again when it ends.
  std::vector<std::function<std::optional<Drift>()>> deferred_;
  bool pass_scheduled_ = false;
  bool ready_sent_ = false;
  bool first_done_ = false;
};

}  // namespace vfready::daemon
