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
  // `journal_dir`: when set, vfreadyd runs in a mount namespace where it is /run/systemd
  // and logs to the journal, so a socket bound at <journal_dir>/journal/socket gets it.
  ServiceDaemon(const FakeHost& host, const std::string& config, const std::string& args,
                const std::string& env = "", const std::string& journal_dir = "")
      : log_(host.root() + "/vfreadyd.log") {
    // exec: the process signalled is vfreadyd itself (ip netns exec execs it too).
    auto command = vfreadyd_command(host, config, args);
    if (!journal_dir.empty()) {
      sh("mkdir -p /run/systemd");
      command = "unshare --mount --propagation private bash -c 'mount --bind " + journal_dir +
                " /run/systemd && exec " + command + " --log-target journal'";
    }
    process_ = std::make_unique<Background>(env + "NOTIFY_SOCKET=" + notify_.path() + " exec " +
                                            command + " 2>" + log_);
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
