// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bringup.hpp"
#include "bus_connector.hpp"
#include "config_files.hpp"
#include "config_reads.hpp"
#include "drift_watch.hpp"
#include "event_loop.hpp"
#include "host_roots.hpp"
#include "name_fights.hpp"
#include "status_files.hpp"
#include "vfready/host/kernel_calls.hpp"
#include "vfready/host/notifier.hpp"

// vfreadyd as a service: the loop with its sources (signals, the bring-up, the bus,
// the drift watch, the watchdog) and the pass scheduler: when a pass runs, over which
// PFs, and what its outcome tells systemd. The loop's thread owns the status and is its
// only writer; passes report to it.
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
  // `continues`: the pass that just ended goes on over `only` (its number stays).
  void start_bringup(std::set<std::string> only = {}, bool continues = false);
  // Drift on a PF whose pass is running is judged again when the pass ends: the pass may
  // have read the PF before the change (a VF rebound while the pass looked at it).
  void on_drift(const Drift& drift, const DriftWatch::Judge& judge_again);
  // Whether `drift`, a rename, is one of a fight (NameFights): then it is shown
  // (show_contested) and named back later, not now.
  bool in_fight(const Drift& drift);
  // The link's row as the host has it in the fight: the other tool's name, the fight as
  // its problem, until a pass names it back.
  void show_contested(const Drift& drift);
  // A pass has ended: it named its links back, where it could, and the rows it wrote
  // again show the host as it found it.
  void fights_after_pass();
  // A link in a fight (NameFights) is named back once every NameFights::kRetry.
  void retry_contested(const std::string& pf, const std::string& vf);
  void schedule_pass();
  // The daemon's one udev reader, made before anything is read.
  void open_udev();
  // The drift watch and the bus: what a daemon that keeps running listens to.
  void start_watching();
  void on_bringup_finished();
  // A host reader its pass gave up on (PassPlanner::given_up()): watched until it ends,
  // each call it hands over meanwhile adopted; every pass meanwhile stops before it
  // reads, saying so; a pass over every PF once it has ended.
  void keep_given_up_reader();
  void on_given_up_reader_ended();
  // At boot, a pass not ready while a reader is given up on: true (said in the log) when
  // vfreadyd waits for it rather than exit.
  bool wait_for_given_up_reader_at_boot();
  // Calls whose helper died (or that came back from stuck) while the pass ran: their PFs
  // again, as the pass's continuation, when it is not ready (three times in a row at
  // most). Whether such a pass started.
  bool bring_returned_up_again(bool ready);
  // --once: the status on stdout, and the loop's end with the outcome.
  void print_once_and_quit(bool ready);
  // READY=1 (once), or the outcome as STATUS= (with ERRNO= when not ready).
  void tell_systemd(bool ready);
  // What comes after a pass: drift deferred during it, a pending reload, a queued
  // reconcile, drift seen meanwhile.
  void start_next_pass();
  // Ends the loop with `code`. vfreadyd then ends by _exit, unwinding no pass: a PF whose
  // autoprobe a pass under way has off gets it on again first.
  void quit(int code);
  void on_signal(int signo);
  // Between passes, watches the helpers left behind (their calls' returns, read from
  // their sockets: host::DeviceCalls::returns_fd()) and brings up again the PFs each
  // held as it returns. A return during a pass waits for the pass's end, which takes it.
  void watch_returns();
  // Where the returns cannot be watched (no descriptor for them): a look each second
  // while some PF is stuck.
  void look_for_returns_later();
  // The calls that have returned since they were left stuck, and those whose helper died:
  // each logged, its PFs marked for a pass. Whether there was any.
  bool take_returned();
  // At boot, a pass not ready with PFs stuck: true (said in the log) when vfreadyd waits
  // for their calls rather than exit.
  bool wait_for_stuck_at_boot();
  // What a loop callback threw: logged, and the loop goes on, unless such errors come
  // so often that a restart by systemd is the better way out.
  void on_internal_error(const std::exception_ptr& error);
  // A pass over every PF: now, or queued behind the running one. Its number (the status's
  // passes_finished reaches it when it has its outcome).
  uint64_t reconcile();
  // Reads the configuration anew (off the loop), then applies it or refuses it; `done`
  // is told the refusal, if any.
  void reload(std::function<void(std::optional<std::string>)> done);
  // A reload's read, judged as a start judges it: put in force (now, or when the running
  // pass ends) or refused. The refusal, if any. `reloading`: RELOADING=1 was sent.
  std::optional<std::string> apply_reload(Result<LoadedConfig> loaded, bool reloading);
  // Drops from the status the PFs the configuration in force does not select.
  void keep_only_configured_pfs();
  void publish();

  ServiceOptions options_;
  BringupInputs inputs_;
  host::Notifier& notifier_;
  EventLoop loop_;
  Clock::time_point epoch_ = Clock::now();
  model::DaemonStatus status_;
  // Names are node-wide and outlive passes: one registry for the daemon's life.
  std::shared_ptr<pipeline::NameRegistry> names_ = std::make_shared<pipeline::NameRegistry>();
  std::shared_ptr<Bringup> bringup_;
  EventLoop::Id bringup_id_ = 0;
  std::unique_ptr<PassPlanner> given_up_reader_;  // see keep_given_up_reader()
  EventLoop::Id given_up_reader_id_ = 0;
  bool given_up_reader_lost_told_ = false;
  std::unique_ptr<BusConnector> bus_;
  StatusFiles files_{loop_, status_, inputs_.config.publish};
  ConfigReads config_reads_{loop_, options_.config_path, options_.compat_paths};
  std::unique_ptr<DriftWatch> drift_;
  std::set<std::string> dirty_;  // PFs a reconcile pass should look at
  // Events that came during a pass of their PF, to judge again when it ends.
  std::vector<DriftWatch::Judge> deferred_;
  NameFights fights_;
  // The host as the last pass that read it saw it: what a reload is judged against.
  std::shared_ptr<const model::HostInfo> last_host_;
  // A refused reload's problem, in force until a reload is put in force: a pass (which
  // starts with no node problems) lists it again, as it does the fights.
  std::optional<model::Problem> reload_refused_;
  void restore_standing_problems();
  std::set<std::string> retries_armed_;  // "<pf>/<vf>" with a retry timer
  // A configuration read while a pass ran, applied when it ends.
  std::optional<BringupInputs> pending_;
  bool pass_scheduled_ = false;
  bool reconcile_queued_ = false;               // a pass over every PF once the running one ends
  std::optional<EventLoop::Id> returns_watch_;  // watch_returns()'s source, while it watches
  bool returns_looked_for_ = false;             // look_for_returns_later()'s timer is set
  std::vector<Clock::time_point> internal_errors_;  // the recent ones
  bool ready_sent_ = false;
  bool first_done_ = false;
  // Passes in a row that brought PFs up again for calls returned or helpers gone during
  // the pass before it was judged: bounded, so that a helper that always dies ends.
  int retries_in_row_ = 0;
  host::KernelCalls calls_at_pass_start_;
};

}  // namespace vfready::daemon
