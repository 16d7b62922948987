// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>

#include "vfready/host/clock.hpp"

// The daemon's one loop, over sd-event (libsystemd): fds, timers, signals and the
// systemd watchdog. Everything that owns state runs on it, on one thread, every PF's
// pass too; calls into a driver are made in helper processes (DeviceCalls), and the host
// is read by a worker process whose socket the loop watches. A callback that
// throws goes to the error handler, and the loop goes on; without one, it ends run()
// with that exception (it cannot cross sd-event's C frames).
namespace vfready::host {

// What a source with changing wants (the bus) asks for before each wait: events on its
// fd (0: none this time), and until when at most.
struct PollSpec {
  int fd = -1;  // the source's fd: the same for its whole life
  short events = 0;
  std::optional<Clock::time_point> deadline;
};

class EventSource {
 public:
  virtual ~EventSource() = default;
  virtual PollSpec prepare() = 0;
  // `revents` is 0 when the deadline came rather than the fd.
  virtual void dispatch(short revents) = 0;
};

class EventLoop {
 public:
  using Id = int;
  EventLoop();  // throws std::system_error when sd-event cannot make a loop
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  Id add(std::shared_ptr<EventSource> source);
  // A source, however it was added, is gone once this returns; removing one from its
  // own callback is fine.
  void remove(Id id);
  // A fixed fd, with no deadline.
  Id add_fd(int fd, short events, std::function<void(short revents)> on_ready);
  // A one-shot timer; it removes itself once it has fired.
  Id add_timer(Clock::time_point when, std::function<void()> on_time);
  // A signal, which the caller has blocked in every thread (sd-event takes it by signalfd).
  Id add_signal(int signo, std::function<void()> on_signal);
  // Sends WATCHDOG=1 from the loop, as systemd asked ($WATCHDOG_USEC): a loop that is
  // stuck stops pinging. False when systemd watches nothing.
  bool feed_watchdog();

  // Takes what a callback threw, after that dispatch, on the loop's thread.
  void on_error(std::function<void(std::exception_ptr)> handler);
  // Runs until quit(); returns its code.
  int run();
  void quit(int code);
  // Dispatches so far: how often the daemon woke up for a source.
  [[nodiscard]] uint64_t turns() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace vfready::host
