// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

// A NOTIFY_SOCKET of the test's own: an AF_UNIX datagram socket bound to a temporary
// path, collecting what a daemon sends with sd_notify. A thread reads it all the time,
// as systemd does: a full socket would block the daemon's sd_notify.
namespace vfready::testing {

class NotifySocket {
 public:
  // Bound at <a new temporary directory>/<name>; `name` may have one directory level
  // ("journal/socket", to stand in for /run/systemd/journal/socket).
  explicit NotifySocket(const std::string& name = "notify");
  ~NotifySocket();
  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const std::string& dir() const { return dir_; }
  // Waits up to `bound` for a datagram with a line starting with `assignment`
  // ("READY=1", "STATUS=degraded"), among those from the `from`th on.
  bool wait_for(const std::string& assignment, std::chrono::milliseconds bound,
                std::size_t from = 0);
  // The same for a datagram that contains `text` anywhere.
  bool wait_for_text(const std::string& text, std::chrono::milliseconds bound,
                     std::size_t from = 0);
  // How many datagrams have arrived; how many carry `assignment`.
  std::size_t count();
  std::size_t count(const std::string& assignment);
  // Every datagram received so far.
  [[nodiscard]] std::vector<std::string> received();

 private:
  void read_loop();

  int fd_ = -1;
  int stop_fd_ = -1;
  std::string dir_;
  std::string path_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> received_;
  std::thread reader_;
};

}  // namespace vfready::testing
