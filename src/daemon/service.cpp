// SPDX-License-Identifier: Apache-2.0
#include "service.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstdio>
#include <mutex>
#include <thread>

#include "config_files.hpp"
#include "log.hpp"
#include "vfready/host/sysfs_sriov_host.hpp"
#include "vfready/model/status_json.hpp"
#include "vfready/model/status_table.hpp"
#include "vfready/version.hpp"

namespace vfready::daemon {

namespace {

// The bus as a loop source: sdbus-c++'s external-loop pattern.
class BusSource final : public EventSource {
 public:
  BusSource(bus::Server& server, std::function<void(const std::exception&)> on_lost)
      : server_(server), on_lost_(std::move(on_lost)) {}
  PollSpec prepare() override {
    const auto d = server_.poll_data();
    return {d.fd, d.events, d.deadline};
  }
  void dispatch(short /*revents*/) override {
    try {
      server_.process();
    } catch (const std::exception& e) {
      on_lost_(e);
    }
  }

 private:
  bus::Server& server_;
  std::function<void(const std::exception&)> on_lost_;
};

// A source the loop polls with no fd: calls `f` at `when`, then every `every`.
class Ticker final : public EventSource {
 public:
  Ticker(std::chrono::microseconds every, std::function<void()> f)
      : every_(every), f_(std::move(f)), next_(Clock::now()) {}
  PollSpec prepare() override { return {-1, 0, next_}; }
  void dispatch(short /*revents*/) override {
    next_ = Clock::now() + every_;
    f_();
  }

 private:
  std::chrono::microseconds every_;
  std::function<void()> f_;
  Clock::time_point next_;
};

}  // namespace

Service::Service(ServiceOptions options, BringupInputs inputs, host::Notifier& notifier)
    : options_(std::move(options)), inputs_(std::move(inputs)), notifier_(notifier) {
  status_.version = kVersion;
  status_.config_file = options_.config_path;
}

Service::~Service() {
  if (signal_fd_ >= 0) {
    close(signal_fd_);
  }
}

int Service::run() {
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGTERM, SIGINT, SIGHUP, SIGUSR2}) {
    sigaddset(&signals, s);
  }
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal_fd_ = signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK);
  loop_.add_fd(signal_fd_, POLLIN, [this](short) { on_signal(); });
  arm_watchdog();
  if (!options_.once) {
    // Subscribed before the bring-up reads anything: nothing changes unseen.
    watch();
    if (options_.bus_address) {
      connect_bus();
    }
  }
  start_bringup();
  return loop_.run();
}

void Service::arm_watchdog() {
  const auto interval = notifier_.watchdog();
  if (!interval) {
    return;
  }
  // Pinged from the loop itself: a loop that is stuck stops pinging, and systemd acts.
  loop_.add(std::make_shared<Ticker>(*interval / 2, [this] { notifier_.notify("WATCHDOG=1"); }));
}

void Service::watch() {
  try {
    monitor_ = std::make_unique<host::LinkMonitor>();
    links_ = std::make_unique<host::NetlinkLinks>();
    loop_.add_fd(monitor_->fd(), POLLIN, [this](short) { on_link_events(); });
  } catch (const std::exception& e) {
    log::warn({}, std::string(e.what()) + ": drift of names goes unseen until a reconcile");
  }
  udev_watch_ = std::make_unique<host::UdevNetdevWatch>(options_.roots.udev_run);
  if (udev_watch_->fd() >= 0) {
    loop_.add_fd(udev_watch_->fd(), POLLIN, [this](short) { on_udev_events(); });
  }
}

void Service::on_link_events() {
  bool overflowed = false;
  const auto events = monitor_->drain(&overflowed);
  if (overflowed) {
    log::warn({}, "link events were lost (netlink buffer overrun): looking at every PF");
    for (const auto& pf : status_.pfs) {
      dirty_.insert(pf.pci);
    }
  }
  for (const auto& e : events) {
    if (auto drift = judge_link_event(e)) {
      on_drift(*drift, [this, e] { return judge_link_event(e); });
    }
  }
  schedule_pass();
}

std::optional<Drift> Service::judge_link_event(const host::LinkEvent& event) {
  auto drift = drift_of(status_, event);
  if (drift && links_) {
    // Events are read some time after they happen: judge by what the link is now,
    // not by a name it had on its way (a pass's own rename read after the pass ended).
    auto now = event;
    const auto link = links_->get(event.ifindex);
    now.removed = !link;
    now.name = link ? link->name : event.name;
    drift = drift_of(status_, now);
  }
  return drift;
}

void Service::on_udev_events() {
  bool overflowed = false;
  const auto ifindexes = udev_watch_->drain(&overflowed);
  if (overflowed) {
    for (const auto& pf : status_.pfs) {
      dirty_.insert(pf.pci);
    }
  }
  for (const int ifindex : ifindexes) {
    if (auto drift = judge_new_netdev(ifindex)) {
      on_drift(*drift, [this, ifindex] { return judge_new_netdev(ifindex); });
    }
  }
  schedule_pass();
}

std::optional<Drift> Service::judge_new_netdev(int ifindex) {
  const auto link = links_ ? links_->get(ifindex) : std::nullopt;
  if (!link) {
    return std::nullopt;  // gone again, or not in this namespace
  }
  host::RootedSysfs sysfs(options_.roots.sysfs);
  const auto device = host::SysfsSriovHost(sysfs, *links_).device_of_netdev(link->name);
  if (!device.pci) {
    return std::nullopt;  // a virtual device (veth, bridge): not ours
  }
  return drift_of_new_netdev(status_, ifindex, link->name, *device.pci, device.physfn.value_or(""));
}

void Service::on_drift(const Drift& drift,
                       const std::function<std::optional<Drift>()>& judge_again) {
  if (bringup_ && bringup_->covers(drift.pf)) {
    // Most such events are the pass's own doing; those it did not cause or see show
    // when they are judged against its outcome.
    deferred_.push_back(judge_again);
    return;
  }
  log::warn({.pf = drift.pf, .vf = drift.vf, .interface = drift.interface}, drift.message);
  const double at = std::chrono::duration<double, std::milli>(Clock::now() - epoch_).count();
  status_.recent_events.push_back({at, drift.pf, drift.vf, drift.message});
  constexpr std::size_t kKept = 32;
  if (status_.recent_events.size() > kKept) {
    status_.recent_events.erase(status_.recent_events.begin());
  }
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

void Service::start_bringup(std::set<std::string> only) {
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
  if (bringup_id_ != 0) {
    loop_.remove(bringup_id_);
  }
  bringup_ = std::make_shared<Bringup>(inputs_, status_, epoch_, busy_, names_, std::move(hooks),
                                       std::move(only));
  bringup_id_ = loop_.add(bringup_);
  bringup_->start();
}

void Service::on_bringup_finished() {
  const auto outcome = bringup_->outcome();
  const bool ready = outcome == model::Outcome::kReady ||
                     (outcome == model::Outcome::kDegraded && inputs_.config.ready_when_degraded);
  const bool first = !first_done_;
  first_done_ = true;
  if (ready && !ready_sent_) {
    notifier_.notify("READY=1\nSTATUS=" + status_.text);
    ready_sent_ = true;
  } else if (!ready) {
    notifier_.notify("STATUS=" + status_.text + "\nERRNO=5");
  } else {
    notifier_.notify("STATUS=" + status_.text);
  }
  if (options_.once) {
    static_cast<void>(
        std::fputs(model::render_status(model::to_json(status_), false).c_str(), stdout));
    loop_.quit(ready ? 0 : 1);
    return;
  }
  if (first && !ready) {
    // Not ready at boot: fail the unit, so that kubelet (with the drop-in) stays back
    // and systemd's Restart= tries again.
    log::error({}, "not ready: exiting so that systemd marks vfready failed");
    loop_.quit(1);
    return;
  }
  // Events of this pass's PFs that came while it ran, judged against its outcome.
  auto deferred = std::move(deferred_);
  deferred_.clear();
  for (const auto& judge : deferred) {
    if (auto drift = judge()) {
      on_drift(*drift, judge);
    }
  }
  schedule_pass();  // drift seen while this bring-up ran
}

void Service::on_signal() {
  signalfd_siginfo si{};
  while (read(signal_fd_, &si, sizeof si) == sizeof si) {
    switch (si.ssi_signo) {
      case SIGHUP:
        if (auto refused = reload()) {
          log::error({}, "reload: " + *refused);
        }
        break;
      case SIGUSR2:
        if (options_.stall_on_sigusr2) {
          log::warn({}, "SIGUSR2: stalling the event loop on purpose (--debug-stall-on-sigusr2)");
          notifier_.notify("STATUS=Event loop stalled on purpose (SIGUSR2)");
          for (;;) {
            pause();
          }
        }
        break;
      default:
        log::info({}, "signal " + std::to_string(si.ssi_signo) +
                          ": stopping; VFs, names and GUIDs stay as they are");
        notifier_.notify("STOPPING=1");
        loop_.quit(options_.once ? 1 : 0);  // --once: interrupted before its outcome
        return;
    }
  }
}

std::optional<std::string> Service::reconcile() {
  if (bringup_ && !bringup_->finished()) {
    return "a bring-up is running; try again when it has finished";
  }
  log::info({}, "reconcile requested");
  start_bringup();
  return std::nullopt;
}

std::optional<std::string> Service::reload() {
  if (bringup_ && !bringup_->finished()) {
    return "a bring-up is running; try again when it has finished";
  }
  notifier_.notify("RELOADING=1\nSTATUS=Reloading " + options_.config_path);
  auto config = load_config(options_.config_path);
  auto table = config ? load_compat_tables(options_.compat_paths)
                      : Result<model::CompatTable>(config.error());
  if (!config || !table) {
    const auto message =
        (config ? table.error() : config.error()).message + ": the running configuration stays";
    status_.problems = {model::problem(model::EventKind::kReloadRefused, message)};
    publish();
    notifier_.notify("READY=1\nSTATUS=" + message);
    return message;
  }
  log::info({}, "reloaded " + options_.config_path);
  inputs_.config = config.value();
  inputs_.table = table.value();
  notifier_.notify("READY=1");
  start_bringup();
  return std::nullopt;
}

void Service::connect_bus() {
  // Connecting waits for the bus's replies: on a worker, so that a slow or wedged bus
  // never holds the loop (or the watchdog). The server comes back through an eventfd.
  struct Pending {
    std::mutex mu;
    std::unique_ptr<bus::Server> server;
    std::string error;
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    ~Pending() { close(fd); }
  };
  auto pending = std::make_shared<Pending>();
  bus::Handlers handlers{[this] { return reconcile(); }, [this] { return reload(); }};
  std::thread([pending, address = *options_.bus_address, handlers = std::move(handlers)] {
    std::unique_ptr<bus::Server> server;
    std::string error;
    try {
      server = bus::Server::start(address, handlers);
    } catch (const std::exception& e) {
      error = e.what();
    }
    std::lock_guard lock(pending->mu);
    pending->server = std::move(server);
    pending->error = std::move(error);
    const uint64_t one = 1;
    static_cast<void>(write(pending->fd, &one, sizeof one));
  }).detach();
  const auto id = std::make_shared<EventLoop::Id>(0);
  *id = loop_.add_fd(pending->fd, POLLIN, [this, pending, id](short) {
    loop_.remove(*id);
    std::lock_guard lock(pending->mu);
    if (!pending->server) {
      // At early boot the bus may not be up yet: the job goes on, the bus comes later.
      log::warn({},
                pending->error + "; trying again in " + std::to_string(bus_retry_.count()) + " s");
      loop_.add_timer(Clock::now() + bus_retry_, [this] { connect_bus(); });
      bus_retry_ = std::min(bus_retry_ * 2, std::chrono::seconds(30));
      return;
    }
    bus_ = std::move(pending->server);
    publish();
    bus_id_ = loop_.add(std::make_shared<BusSource>(*bus_, [this](const std::exception& e) {
      log::warn({}, std::string("D-Bus connection lost: ") + e.what() + "; reconnecting");
      loop_.remove(bus_id_);
      bus_id_ = 0;
      // The server is not deleted from within its own dispatch: the timer does it.
      loop_.add_timer(Clock::now(), [this] {
        bus_.reset();
        connect_bus();
      });
    }));
    bus_retry_ = std::chrono::seconds(1);
    log::info({}, std::string("serving ") + bus::kBusName + " on D-Bus");
  });
}

void Service::publish() {
  if (!bus_) {
    return;
  }
  try {
    bus_->publish(status_);
  } catch (const std::exception& e) {
    // The bus is for reading the status: it never stops the job.
    log::warn({}, std::string("D-Bus: publishing the status failed: ") + e.what());
  }
}

}  // namespace vfready::daemon
