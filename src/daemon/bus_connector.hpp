// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "event_loop.hpp"
#include "vfready/bus/bus.hpp"
#include "vfready/model/status.hpp"

// The daemon on D-Bus: connects on a worker thread (connecting waits for the bus's
// replies, and at early boot the bus may not be up), tries again with a back-off up to
// 30 s, reconnects when the connection is lost, and serves from the loop.
namespace vfready::daemon {

class BusConnector {
 public:
  // `address`: "" for the system bus. `connected` is called on the loop each time a
  // connection is up, so that the caller publishes what there is to show.
  BusConnector(EventLoop& loop, std::string address, bus::Handlers handlers,
               std::function<void()> connected);
  ~BusConnector();
  BusConnector(const BusConnector&) = delete;
  BusConnector& operator=(const BusConnector&) = delete;

  void start();
  // Shows `status` on the bus, when connected. Never throws: the bus only shows.
  void publish(const model::DaemonStatus& status);

 private:
  void on_lost(const std::exception& e);
  // A connection could not be had (`why`): start() again after the back-off.
  void try_later(const std::string& why);

  EventLoop& loop_;
  std::string address_;
  bus::Handlers handlers_;
  std::function<void()> connected_;
  std::unique_ptr<bus::Server> server_;
  EventLoop::Id source_ = 0;
  bool lost_ = false;  // the connection failed: replaced from a timer, not used meanwhile
  std::chrono::seconds retry_{1};
};

}  // namespace vfready::daemon
