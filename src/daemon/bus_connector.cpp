// SPDX-License-Identifier: Apache-2.0
#include "bus_connector.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <thread>

#include "log.hpp"
#include "vfready/host/errno_name.hpp"

namespace vfready::daemon {

namespace {

// The bus as a loop source: sdbus-c++'s external-loop pattern.
class BusSource final : public EventSource {
 public:
  BusSource(bus::Server& server, std::function<void(const std::exception&)> on_lost)
      : server_(server), on_lost_(std::move(on_lost)) {}
  PollSpec prepare() override {
    try {
      const auto d = server_.poll_data();
      fd_ = d.fd;
      std::optional<Clock::time_point> deadline;  // sd-bus's is CLOCK_MONOTONIC's
      if (d.deadline) {
        deadline = Clock::from_monotonic(*d.deadline);
      }
      return {d.fd, d.events, deadline};
    } catch (const std::exception& e) {
      on_lost_(e);  // as in dispatch: the connection is replaced
      return {fd_, 0, std::nullopt};
    }
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
  int fd_ = -1;
};

}  // namespace

BusConnector::BusConnector(EventLoop& loop, std::string address, bus::Handlers handlers,
                           std::function<void()> connected)
    : loop_(loop),
      address_(std::move(address)),
      handlers_(std::move(handlers)),
      connected_(std::move(connected)) {}

BusConnector::~BusConnector() = default;

namespace {

// What the connecting thread hands the loop: the server, or why there is none. That
// thread is sdbus-c++'s price (1.2 connects and takes the bus name with blocking calls,
// and cannot adopt a connection made on the loop); it may outlive the connector (a bus
// that never answers), so what it shares is owned by shared_ptr, under its mutex.
struct Connecting {
  Connecting() = default;
  Connecting(const Connecting&) = delete;
  Connecting& operator=(const Connecting&) = delete;
  ~Connecting() {
    if (fd >= 0) {
      close(fd);
    }
  }
  std::mutex mu;  // the connecting thread's, and the loop's once fd is readable
  std::unique_ptr<bus::Server> server;
  std::string error;
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);  // readable once it has connected or failed
};

void connect_in_background(const std::shared_ptr<Connecting>& connecting,
                           const std::string& address, const bus::Handlers& handlers) {
  std::thread([connecting, address, handlers] {
    std::unique_ptr<bus::Server> server;
    std::string error;
    try {
      server = bus::Server::start(address, handlers);
    } catch (const std::exception& e) {
      error = e.what();
    }
    std::lock_guard lock(connecting->mu);
    connecting->server = std::move(server);
    connecting->error = std::move(error);
    const uint64_t one = 1;
    static_cast<void>(write(connecting->fd, &one, sizeof one));
  }).detach();
}

}  // namespace

void BusConnector::start() {
  auto connecting = std::make_shared<Connecting>();
  if (connecting->fd < 0) {
    // Out of descriptors (or memory): no way to hear the connection made.
    try_later("eventfd: " + host::errno_name(errno));
    return;
  }
  connect_in_background(connecting, address_, handlers_);
  const auto id = std::make_shared<EventLoop::Id>(0);
  *id = loop_.add_fd(connecting->fd, POLLIN, [this, connecting, id](short) {
    loop_.remove(*id);
    std::lock_guard lock(connecting->mu);
    if (!connecting->server) {
      // At early boot the bus may not be up yet: the job goes on, the bus comes later.
      try_later(connecting->error);
      return;
    }
    server_ = std::move(connecting->server);
    lost_ = false;
    source_ = loop_.add(
        std::make_shared<BusSource>(*server_, [this](const std::exception& e) { on_lost(e); }));
    retry_ = std::chrono::seconds(1);
    log::info({}, std::string("serving ") + bus::kBusName + " on D-Bus");
    connected_();
  });
}

void BusConnector::try_later(const std::string& why) {
  log::warn({}, why + "; trying D-Bus again in " + std::to_string(retry_.count()) + " s");
  loop_.add_timer(Clock::now() + retry_, [this] { start(); });
  retry_ = std::min(retry_ * 2, std::chrono::seconds(30));
}

void BusConnector::on_lost(const std::exception& e) {
  if (lost_) {
    return;  // heard already (a failed publish, then the connection's own error)
  }
  lost_ = true;
  log::warn({}, std::string("D-Bus connection lost: ") + e.what() + "; reconnecting");
  if (source_ != 0) {
    loop_.remove(source_);
    source_ = 0;
  }
  // The server is not deleted from within its own dispatch: the timer does it.
  loop_.add_timer(Clock::now(), [this] {
    if (source_ != 0) {  // lost as it was added (its first prepare): added after all
      loop_.remove(source_);
      source_ = 0;
    }
    server_.reset();
    start();
  });
}

void BusConnector::publish(const model::DaemonStatus& status) {
  if (!server_ || lost_) {
    return;  // the next connection publishes what there is then
  }
  try {
    server_->publish(status);
  } catch (const std::exception& e) {
    // The status is made printable and every object stays whole (bus.cpp): what fails
    // here is the connection (ENOTCONN once the bus dropped it). A new one republishes.
    log::warn({}, std::string("D-Bus: publishing the status failed: ") + e.what());
    on_lost(e);
  }
}

}  // namespace vfready::daemon
