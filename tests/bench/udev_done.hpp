// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace vfready::testing {

// Which netdevs udev has handled on a fake host: its database file `n<ifindex>` is
// renamed into `run/udev/data` once udev is done with one (its rename included), as
// udevd's device_update_db() does. Watched with inotify from construction on.
class UdevDone {
 public:
  explicit UdevDone(const std::string& data_dir)
      : fd_(inotify_init1(IN_CLOEXEC | IN_NONBLOCK)),
        watch_(fd_ < 0 ? -1 : inotify_add_watch(fd_, data_dir.c_str(), IN_MOVED_TO)),
        reader_([this] { read(); }) {}
  ~UdevDone() {
    stop_ = true;
    reader_.join();
    if (fd_ >= 0) {
      close(fd_);
    }
  }
  UdevDone(const UdevDone&) = delete;
  UdevDone& operator=(const UdevDone&) = delete;

  [[nodiscard]] bool watching() const { return watch_ >= 0; }
  // Until udev is done with the netdev `ifindex`; false at `bound`.
  bool wait(int ifindex, std::chrono::milliseconds bound) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, bound, [&] { return done_.contains(ifindex); });
  }

 private:
  void read() {
    alignas(inotify_event) char buf[4096];
    while (!stop_ && fd_ >= 0) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) {
        continue;
      }
      const ssize_t n = ::read(fd_, buf, sizeof buf);
      for (ssize_t at = 0; at < n;) {
        const auto* e = reinterpret_cast<const inotify_event*>(buf + at);  // NOLINT
        // "n<ifindex>" renamed into place (not the "n<ifindex>.tmp" written before it).
        char* end = nullptr;
        const long ifindex =
            e->len > 1 && e->name[0] == 'n' ? std::strtol(e->name + 1, &end, 10) : 0;
        if (ifindex > 0 && end != nullptr && *end == '\0') {
          {
            std::lock_guard lock(mu_);
            done_.insert(static_cast<int>(ifindex));
          }
          cv_.notify_all();
        }
        at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
      }
    }
  }

  int fd_;
  int watch_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::set<int> done_;
  std::thread reader_;
};

}  // namespace vfready::testing
