// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <signal.h>

#include <memory>
#include <string>

#include "daemon_run.hpp"
#include "notify_socket.hpp"
#include "process.hpp"

// vfreadyd as systemd runs it (no --once), on a fake host, with a NOTIFY_SOCKET of the
// test's own; its log goes to a file so that a long run never fills a pipe.
namespace vfready::testing {

class ServiceDaemon {
 public:
  // `env`: extra assignments ("WATCHDOG_USEC=200000 "), `args`: extra options.
  ServiceDaemon(const FakeHost& host, const std::string& config, const std::string& args,
                const std::string& env = "")
      : log_(host.root() + "/vfreadyd.log") {
    // exec: the process signalled is vfreadyd itself (ip netns exec execs it too).
    process_ = std::make_unique<Background>(env + "NOTIFY_SOCKET=" + notify_.path() + " exec " +
                                            vfreadyd_command(host, config, args) + " 2>" + log_);
  }
  ~ServiceDaemon() { stop(); }
  ServiceDaemon(const ServiceDaemon&) = delete;
  ServiceDaemon& operator=(const ServiceDaemon&) = delete;

  NotifySocket& notify() { return notify_; }
  Background& process() { return *process_; }
  [[nodiscard]] std::string log() const { return read_file(log_); }
  // SIGTERM, then its exit code (-1 when it did not exit within 10 s).
  int stop() {
    if (process_->exited()) {
      return process_->wait(std::chrono::milliseconds(0)).exit_code;
    }
    process_->signal(SIGTERM);
    return process_->wait(std::chrono::seconds(10)).exit_code;
  }

 private:
  NotifySocket notify_;
  std::string log_;
  std::unique_ptr<Background> process_;
};

}  // namespace vfready::testing
