// SPDX-License-Identifier: Apache-2.0
#include "service.hpp"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>

#include "config_files.hpp"
#include "log.hpp"
#include "vfready/host/errno_name.hpp"
#include "vfready/model/plan.hpp"
#include "vfready/model/status_json.hpp"
#include "vfready/model/status_table.hpp"
#include "vfready/version.hpp"

namespace vfready::daemon {

Service::Service(ServiceOptions options, BringupInputs inputs, host::Notifier& notifier)
    : options_(std::move(options)), inputs_(std::move(inputs)), notifier_(notifier) {
  status_.version = kVersion;
  status_.config_file = options_.config_path;
  status_.started_unix_ms = wall_clock_ms();
}

Service::~Service() {
  if (given_up_reader_id_ != 0) {
    loop_.remove(given_up_reader_id_);  // before the reader's socket closes
  }
}

int Service::run() {
  sigset_t signals;
  sigemptyset(&signals);
  // SIGUSR1 and SIGALRM end a process by default: a stray one is logged, not obeyed.
  constexpr std::array kTaken = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM};
  for (int s : kTaken) {
    sigaddset(&signals, s);
  }
  // Blocked in every thread (threads are started later and inherit it): the loop takes
  // them through a signalfd.
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  for (int s : kTaken) {
    loop_.add_signal(s, [this, s] { on_signal(s); });
  }
  // A log written to a pipe whose reader left fails with EPIPE instead of ending vfreadyd.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, nullptr);
  loop_.on_error([this](const std::exception_ptr& e) { on_internal_error(e); });
  // Pinged from the loop itself: a loop that is stuck stops pinging, and systemd acts.
  loop_.feed_watchdog();
  open_udev();
  if (!options_.once) {
    start_watching();
  }
  // At once: what a file left by an earlier run says is no longer true.
  files_.flush();
  start_bringup();
  const int code = loop_.run();
  files_.flush_pending();  // what vfreadyctl shows once vfreadyd is gone
  log::info({}, "kernel calls since start: " + host::kernel_calls().describe());
  return code;
}

void Service::open_udev() {
  try {
    auto reader = std::make_shared<host::UdevEventReader>();
    // Read on the loop: each batch to the running pass's wait, its adds to the drift watch.
    loop_.add_fd(reader->fd(), POLLIN, [this, reader](short) {
      reader->read_some([this](const auto& adds, bool overflowed) {
        if (drift_) {
          drift_->on_udev_adds(adds, overflowed);
        }
      });
    });
    inputs_.udev = std::move(reader);  // read from here on: the passes may listen to it
    if (!inputs_.udev->hearing()) {
      log::warn({},
                "udevd was not running when vfreadyd started: its events go unheard "
                "until vfreadyd restarts (each netdev's state is asked of libudev, and "
                "new netdevs are seen in link events)");
    }
  } catch (const std::exception& e) {
    log::warn({}, std::string(e.what()) + ": the bring-up cannot wait for udev" +
                      (options_.once ? "" : " (new netdevs are seen in link events)"));
  }
}

void Service::start_watching() {
  // Subscribed before the bring-up reads anything: nothing changes unseen.
  drift_ = std::make_unique<DriftWatch>(
      loop_, status_,
      DriftWatch::Hooks{
          .drift = [this](const Drift& d, const DriftWatch::Judge& again) { on_drift(d, again); },
          .netdev =
              [this](const DriftWatch::Judge& judge) {
                if (bringup_ && !bringup_->finished()) {
                  deferred_.push_back(judge);  // judged against the pass's outcome
                } else if (auto drift = judge()) {
                  on_drift(*drift, judge);
                }
              },
          .lost =
              [this] {
                for (const auto& pf : status_.pfs) {
                  dirty_.insert(pf.pci.str());
                }
              },
          .judged = [this] { schedule_pass(); }});
  drift_->start([this] { return inputs_.host_access->drift_reads(inputs_); }, inputs_.udev);
  if (options_.bus_address) {
    bus_ = std::make_unique<BusConnector>(
        loop_, *options_.bus_address,
        bus::Handlers{[this] { return reconcile(); },
                      [this](bus::Handlers::Answer answer) { reload(std::move(answer)); }},
        [this] { publish(); });
    bus_->start();
  }
}

void Service::on_drift(const Drift& drift, const DriftWatch::Judge& judge_again) {
  if (bringup_ && bringup_->covers(drift.pf)) {
    // Most such events are the pass's own doing; those it did not cause or see show
    // when they are judged against its outcome.
    deferred_.push_back(judge_again);
    return;
  }
  if (drift.renamed && in_fight(drift)) {
    return;  // named back at the slow rate, not at once
  }
  log::warn({.pf = drift.pf, .vf = drift.vf, .interface = drift.interface}, drift.message);
  const double at = std::chrono::duration<double, std::milli>(Clock::now() - epoch_).count();
  status_.recent_events.push_back({at, drift.pf, drift.vf, drift.message});
  constexpr std::size_t kKept = 32;
  if (status_.recent_events.size() > kKept) {
    status_.recent_events.erase(status_.recent_events.begin());
  }
  ++status_.drift_events;
  dirty_.insert(drift.pf);
  publish();
}

void Service::schedule_pass() {
  if (dirty_.empty() || pass_scheduled_ || !first_done_ || (bringup_ && !bringup_->finished())) {
    return;  // the running bring-up's end calls again
  }
  pass_scheduled_ = true;
  // A re-created netdev comes with a burst of events: take them in as one pass.
  loop_.add_timer(Clock::now() + std::chrono::milliseconds(20), [this] {
    pass_scheduled_ = false;
    if (bringup_ && !bringup_->finished()) {
      return;
    }
    auto only = std::move(dirty_);
    dirty_.clear();
    log::info({}, "reconciling " + std::to_string(only.size()) + " PF(s) after drift");
    start_bringup(std::move(only));
  });
}

void Service::start_bringup(std::set<std::string> only, bool continues) {
  BringupHooks hooks;
  hooks.changed = [this] { publish(); };
  hooks.progress = [this](const std::string& line, std::chrono::milliseconds bound) {
    std::string message = "STATUS=" + line;
    if (!ready_sent_) {
      // Slow steps that make progress keep systemd's start timeout away.
      const auto usec = std::chrono::duration_cast<std::chrono::microseconds>(bound).count();
      message += "\nEXTEND_TIMEOUT_USEC=" + std::to_string(usec + 5'000'000);
    }
    notifier_.notify(message);
  };
  hooks.finished = [this] { on_bringup_finished(); };
  auto bringup = std::make_shared<Bringup>(inputs_, status_, epoch_, names_, std::move(hooks),
                                           std::move(only));
  if (given_up_reader_) {
    bringup->refuse_host_read(model::problem(
        model::EventKind::kHostReadFailed,
        "reading the host failed: an earlier read has not ended (its reader, vfready-read, "
        "waits in the kernel); the host is read again once it has"));
  }
  // Started before it is the service's: one that cannot start (no eventfd, no epoll set,
  // no thread) throws to the loop's error handler, and the last bring-up, finished,
  // stays the one later passes are scheduled after.
  bringup->start();
  if (bringup_id_ != 0) {
    loop_.remove(bringup_id_);
  }
  calls_at_pass_start_ = host::kernel_calls();
  bringup_ = std::move(bringup);
  status_.passes_started += continues ? 0 : 1;
  restore_standing_problems();
  bringup_id_ = loop_.add(bringup_);
  // Readers see the pass's number with the configuration it applies, in one status.
  publish();
}

void Service::on_bringup_finished() {
  keep_given_up_reader();
  const auto outcome = bringup_->outcome();
  const bool ready = outcome == model::Outcome::kReady ||
                     (outcome == model::Outcome::kDegraded && inputs_.config.ready_when_degraded);
  // Calls whose helper died (or that came back from stuck) while the pass ran: their PFs
  // again, their effects read back, before a pass that is not ready is judged (at boot
  // too); after a ready one, as the next pass.
  if (bring_returned_up_again(ready)) {
    return;
  }
  const bool first = !first_done_;
  first_done_ = true;
  ++status_.passes_finished;
  // The pass's own calls and those of drift handling while it ran.
  log::info({}, "kernel calls since the pass began: " +
                    (host::kernel_calls() - calls_at_pass_start_).describe());
  status_.node_ready = ready;
  if (bringup_->host()) {
    last_host_ = bringup_->host();
  }
  fights_after_pass();
  restore_standing_problems();
  if (first) {
    status_.bringup_ms = status_.ready_ms;
  }
  publish();
  files_.flush();
  watch_returns();  // before systemd hears of the pass
  tell_systemd(ready);
  inputs_.host_access->pass_over(inputs_);
  if (options_.once) {
    print_once_and_quit(ready);
    return;
  }
  if (!ready_sent_ && !ready && !wait_for_given_up_reader_at_boot() && !wait_for_stuck_at_boot()) {
    // Not ready at boot, no PF stuck: fail the unit, so that kubelet (with the drop-in)
    // stays back and systemd's Restart= tries again.
    log::error({}, "not ready: exiting so that systemd marks vfready failed");
    quit(1);
    return;
  }
  start_next_pass();
}

bool Service::bring_returned_up_again(bool ready) {
  constexpr int kRetriesInRow = 3;
  const bool returned = !options_.once && take_returned();
  if (returned && !ready && retries_in_row_ < kRetriesInRow) {
    ++retries_in_row_;
    auto only = std::move(dirty_);
    dirty_.clear();
    publish();
    try {
      start_bringup(std::move(only), /*continues=*/true);  // its outcome is the pass's
      return true;
    } catch (const std::exception& e) {
      log::error({}, std::string("bringing PFs up again failed: ") + e.what());
    }
  }
  retries_in_row_ = 0;
  return false;
}

void Service::print_once_and_quit(bool ready) {
  static_cast<void>(std::fputs(
      model::render_status(model::to_json(model::printable(status_)), false, /*vfs=*/true).c_str(),
      stdout));
  quit(ready ? 0 : 1);
}

void Service::tell_systemd(bool ready) {
  if (ready && !ready_sent_) {
    notifier_.notify("READY=1\nSTATUS=" + status_.text);
    ready_sent_ = true;
  } else if (!ready) {
    notifier_.notify("STATUS=" + status_.text + "\nERRNO=5");
  } else {
    notifier_.notify("STATUS=" + status_.text);
  }
}

void Service::start_next_pass() {
  // Events of the last pass's PFs that came while it ran, judged against its outcome.
  auto deferred = std::move(deferred_);
  deferred_.clear();
  {
    // One index of the outcome for all of them, gone before the status changes below.
    std::optional<DriftWatch::Batch> batch;
    if (drift_) {
      batch.emplace(*drift_);
    }
    for (const auto& judge : deferred) {
      if (auto drift = judge()) {
        on_drift(*drift, judge);
      }
    }
  }
  if (pending_) {
    // A reload that came while the pass ran: its pass covers every PF, drift included.
    inputs_ = std::move(*pending_);
    pending_.reset();
    files_.configure(inputs_.config.publish);
    keep_only_configured_pfs();
    ++status_.config_generation;
    publish();
    dirty_.clear();
    log::info({}, "applying the configuration read while the last pass ran");
    reconcile_queued_ = false;  // that pass covers every PF
    start_bringup();
    return;
  }
  if (reconcile_queued_) {
    reconcile_queued_ = false;
    dirty_.clear();
    log::info({}, "starting the reconcile requested while the last pass ran");
    start_bringup();
    return;
  }
  schedule_pass();  // drift seen while the pass ran
}

void Service::on_internal_error(const std::exception_ptr& error) {
  std::string what = "unknown exception";
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  const auto now = Clock::now();
  std::erase_if(internal_errors_,
                [&](Clock::time_point t) { return now - t > std::chrono::minutes(1); });
  internal_errors_.push_back(now);
  constexpr std::size_t kPerMinute = 10;
  if (internal_errors_.size() >= kPerMinute) {
    log::error({.event = model::EventKind::kInternalError},
               "internal error: " + what + "; " + std::to_string(kPerMinute) +
                   " within a minute: exiting so that systemd restarts vfready");
    quit(1);
    return;
  }
  log::error({.event = model::EventKind::kInternalError}, "internal error: " + what + "; going on");
}

void Service::quit(int code) {
  loop_.quit(code);
  if (bringup_) {
    bringup_->let_autoprobe_go();
  }
}

uint64_t Service::reconcile() {
  if (bringup_ && !bringup_->finished()) {
    // The next pass covers every PF: this one, or a reload's read while the pass runs.
    reconcile_queued_ = true;
    log::info({}, "reconcile requested: it starts when the running pass ends");
    return status_.passes_started + 1;
  }
  log::info({}, "reconcile requested");
  start_bringup();
  return status_.passes_started;
}

void Service::publish() {
  if (bus_) {
    bus_->publish(status_);
  }
  files_.changed();
}

}  // namespace vfready::daemon
