// SPDX-License-Identifier: Apache-2.0
// The one file that speaks to systemd through libsystemd: notifications, the journal,
// and the event loop (sd-event) with its watchdog.
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "vfready/host/event_loop.hpp"
#include "vfready/host/journal.hpp"
#include "vfready/host/notifier.hpp"

namespace vfready::host {

bool SystemdNotifier::notify(std::string_view assignments) {
  const std::string message(assignments);
  // 0 means "no NOTIFY_SOCKET": not an error.
  return sd_notify(0, message.c_str()) >= 0;
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

bool journal_reachable() {
  // sd_journal_sendv writes datagrams here; without journald nothing listens on it.
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return false;
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  static constexpr char kPath[] = "/run/systemd/journal/socket";
  std::memcpy(addr.sun_path, kPath, sizeof kPath);
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockaddr API
  const bool ok = connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

// --- The event loop.

namespace {

void check(int r, const char* what) {
  if (r < 0) {
    throw std::system_error(-r, std::generic_category(), what);
  }
}

// A time of the daemon's clock as sd-event's CLOCK_MONOTONIC microseconds.
uint64_t usec_of(Clock::time_point t) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
      Clock::to_monotonic(t).time_since_epoch());
  return us.count() < 0 ? 0 : static_cast<uint64_t>(us.count());
}

}  // namespace

struct EventLoop::Impl {
  // One source of the loop: an EventSource (io + time), an fd, a timer or a signal.
  struct Entry {
    Impl* impl = nullptr;
    Id id = 0;
    sd_event_source* io = nullptr;
    sd_event_source* time = nullptr;
    sd_event_source* signal = nullptr;
    std::shared_ptr<EventSource> source;
    std::function<void(short)> on_fd;
    std::function<void()> on_time;  // a timer's or a signal's
    Clock::time_point when;         // a timer's time
    // A source's wants as last given to sd-event (on_prepare() tells it only changes:
    // each setter costs, and most turns change nothing): its fd's events, and the
    // deadline its timer is armed for (none: off, or fired, which disarms it).
    int io_events = -1;
    std::optional<Clock::time_point> armed;
    Entry() = default;
    Entry(const Entry&) = delete;
    Entry& operator=(const Entry&) = delete;
    ~Entry() {
      sd_event_source_disable_unref(io);
      sd_event_source_disable_unref(time);
      sd_event_source_disable_unref(signal);
    }
  };

  Impl() { check(sd_event_new(&event), "sd_event_new"); }
  ~Impl() {
    entries.clear();
    removed.clear();
    sd_event_source_disable_unref(wake);
    sd_event_unref(event);
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  Entry& make() {
    auto entry = std::make_unique<Entry>();
    entry->impl = this;
    entry->id = next++;
    auto& ref = *entry;
    entries[ref.id] = std::move(entry);
    return ref;
  }

  void remove(Id id) {
    auto it = entries.find(id);
    if (it == entries.end()) {
      return;
    }
    // Disabled now; freed between dispatches, as its callback may be the one running.
    for (auto* s : {it->second->io, it->second->time, it->second->signal}) {
      sd_event_source_set_enabled(s, SD_EVENT_OFF);
    }
    removed.push_back(std::move(it->second));
    entries.erase(it);
  }

  // Runs a callback: an exception is kept for run() to throw (it cannot cross
  // sd-event's frames), and the loop is woken so that run() sees it at once.
  template <class F>
  int guarded(F&& f) noexcept {
    try {
      f();
    } catch (...) {
      error = std::current_exception();
      sd_event_source_set_enabled(wake, SD_EVENT_ONESHOT);
    }
    return 0;
  }

  static Entry& entry_of(void* userdata) { return *static_cast<Entry*>(userdata); }

  static int on_io(sd_event_source* /*s*/, int /*fd*/, uint32_t revents, void* userdata) {
    auto& e = entry_of(userdata);
    return e.impl->guarded([&] {
      const auto r = static_cast<short>(revents);  // epoll's bits are poll's
      if (e.source) {
        e.source->dispatch(r);
      } else {
        e.on_fd(r);
      }
    });
  }

  static int on_time(sd_event_source* /*s*/, uint64_t /*usec*/, void* userdata) {
    auto& e = entry_of(userdata);
    return e.impl->guarded([&] {
      if (e.source) {
        e.armed.reset();  // a one-shot timer: off once it has fired
        e.source->dispatch(0);
        return;
      }
      Impl* impl = e.impl;
      const Id id = e.id;
      e.on_time();
      impl->remove(id);  // a one-shot timer is done
    });
  }

  static int on_signal(sd_event_source* /*s*/, const signalfd_siginfo* /*si*/, void* userdata) {
    auto& e = entry_of(userdata);
    return e.impl->guarded([&] { e.on_time(); });
  }

  // Before each wait: what a source wants now.
  static int on_prepare(sd_event_source* /*s*/, void* userdata) {
    auto& e = entry_of(userdata);
    return e.impl->guarded([&] {
      const auto spec = e.source->prepare();
      if (spec.events != e.io_events) {
        check(sd_event_source_set_io_events(e.io, static_cast<uint16_t>(spec.events)),
              "sd_event_source_set_io_events");
        e.io_events = spec.events;
      }
      if (spec.deadline && spec.deadline != e.armed) {
        check(sd_event_source_set_time(e.time, usec_of(*spec.deadline)),
              "sd_event_source_set_time");
        check(sd_event_source_set_enabled(e.time, SD_EVENT_ONESHOT), "sd_event_source_set_enabled");
        e.armed = spec.deadline;
      } else if (!spec.deadline && e.armed) {
        check(sd_event_source_set_enabled(e.time, SD_EVENT_OFF), "sd_event_source_set_enabled");
        e.armed.reset();
      }
    });
  }

  static int on_wake(sd_event_source* /*s*/, void* /*userdata*/) { return 0; }

  // After a test has skipped the clock: each timer set again for its time, which the
  // skip may have reached (a source's deadline is set before each wait anyway).
  void follow_the_clock() {
    if (Clock::skipped() == skipped) {
      return;
    }
    skipped = Clock::skipped();
    for (auto& [id, e] : entries) {
      e->armed.reset();  // a source's deadline is given again (as a time for the new clock)
      if (e->time && !e->source) {
        check(sd_event_source_set_time(e->time, usec_of(e->when)), "sd_event_source_set_time");
      }
    }
  }

  sd_event* event = nullptr;
  sd_event_source* wake = nullptr;  // enabled to end a wait at once
  std::map<Id, std::unique_ptr<Entry>> entries;
  std::vector<std::unique_ptr<Entry>> removed;
  Id next = 1;
  Clock::duration skipped = Clock::skipped();  // the timers' times were set for it
  std::optional<int> quit;
  uint64_t turns = 0;
  std::exception_ptr error;
  std::function<void(std::exception_ptr)> on_error;
};

EventLoop::EventLoop() : impl_(std::make_unique<Impl>()) {
  check(sd_event_add_defer(impl_->event, &impl_->wake, Impl::on_wake, nullptr),
        "sd_event_add_defer");
  check(sd_event_source_set_enabled(impl_->wake, SD_EVENT_OFF), "sd_event_source_set_enabled");
}

EventLoop::~EventLoop() = default;

EventLoop::Id EventLoop::add(std::shared_ptr<EventSource> source) {
  auto& e = impl_->make();
  e.source = std::move(source);
  const auto spec = e.source->prepare();
  try {
    check(sd_event_add_io(impl_->event, &e.io, spec.fd, static_cast<uint16_t>(spec.events),
                          Impl::on_io, &e),
          "sd_event_add_io");
    check(sd_event_source_set_prepare(e.io, Impl::on_prepare), "sd_event_source_set_prepare");
    // Accuracy 1 us: a source's deadline is when something is due (a pass's bound, a
    // port to look at again), not a wake-up sd-event may coalesce (0 would be its default
    // of 250 ms, which set_time keeps).
    check(sd_event_add_time(impl_->event, &e.time, CLOCK_MONOTONIC,
                            spec.deadline ? usec_of(*spec.deadline) : 0, 1, Impl::on_time, &e),
          "sd_event_add_time");
    check(sd_event_source_set_enabled(e.time, spec.deadline ? SD_EVENT_ONESHOT : SD_EVENT_OFF),
          "sd_event_source_set_enabled");
    e.io_events = spec.events;
    e.armed = spec.deadline;
  } catch (...) {
    impl_->remove(e.id);
    throw;
  }
  return e.id;
}

void EventLoop::remove(Id id) { impl_->remove(id); }

EventLoop::Id EventLoop::add_fd(int fd, short events, std::function<void(short)> on_ready) {
  auto& e = impl_->make();
  e.on_fd = std::move(on_ready);
  const int r =
      sd_event_add_io(impl_->event, &e.io, fd, static_cast<uint16_t>(events), Impl::on_io, &e);
  if (r < 0) {
    impl_->remove(e.id);
    check(r, "sd_event_add_io");
  }
  return e.id;
}

EventLoop::Id EventLoop::add_timer(Clock::time_point when, std::function<void()> on_time) {
  auto& e = impl_->make();
  e.on_time = std::move(on_time);
  e.when = when;
  // Accuracy 1 ms: timers of the daemon are bounds and back-offs, not a metronome.
  const int r = sd_event_add_time(impl_->event, &e.time, CLOCK_MONOTONIC, usec_of(when), 1000,
                                  Impl::on_time, &e);
  if (r < 0) {
    impl_->remove(e.id);
    check(r, "sd_event_add_time");
  }
  return e.id;
}

EventLoop::Id EventLoop::add_signal(int signo, std::function<void()> on_signal) {
  auto& e = impl_->make();
  e.on_time = std::move(on_signal);
  const int r = sd_event_add_signal(impl_->event, &e.signal, signo, Impl::on_signal, &e);
  if (r < 0) {
    impl_->remove(e.id);
    check(r, "sd_event_add_signal");
  }
  return e.id;
}

bool EventLoop::feed_watchdog() { return sd_event_set_watchdog(impl_->event, 1) > 0; }

int EventLoop::run() {
  while (!impl_->quit) {
    impl_->removed.clear();
    impl_->guarded([this] { impl_->follow_the_clock(); });
    check(sd_event_run(impl_->event, UINT64_MAX), "sd_event_run");
    ++impl_->turns;
    if (auto error = std::exchange(impl_->error, nullptr)) {
      if (!impl_->on_error) {
        std::rethrow_exception(error);
      }
      impl_->on_error(error);
    }
  }
  return *impl_->quit;
}

void EventLoop::on_error(std::function<void(std::exception_ptr)> handler) {
  impl_->on_error = std::move(handler);
}

void EventLoop::quit(int code) { impl_->quit = code; }

uint64_t EventLoop::turns() const { return impl_->turns; }

}  // namespace vfready::host
