// SPDX-License-Identifier: Apache-2.0
#include "vfready/host/udev_wait.hpp"

#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>

namespace vfready::host {

namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

RunDirUdevWait::~RunDirUdevWait() {
  if (fd_ >= 0) {
    close(fd_);
  }
}

bool RunDirUdevWait::wait_initialized(int ifindex, std::chrono::steady_clock::time_point deadline) {
  if (!exists(run_dir_)) {
    return true;
  }
  const auto data = run_dir_ + "/data";
  const auto file = data + "/n" + std::to_string(ifindex);
  if (fd_ < 0) {
    fd_ = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (fd_ >= 0 && inotify_add_watch(fd_, data.c_str(), IN_CREATE | IN_MOVED_TO) < 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  // Watching first, then looking: a file made in between is seen either way. Events of
  // other netdevs (or of earlier waits) only make this look again.
  alignas(inotify_event) char buf[4096];
  while (!exists(file)) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (fd_ < 0 || left.count() <= 0) {
      return false;
    }
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) > 0) {
      while (read(fd_, buf, sizeof buf) > 0) {
      }
    }
  }
  return true;
}

UdevNetdevWatch::UdevNetdevWatch(const std::string& run_dir) {
  const auto data = run_dir + "/data";
  if (!exists(data)) {
    return;
  }
  fd_ = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (fd_ >= 0 && inotify_add_watch(fd_, data.c_str(), IN_CREATE | IN_MOVED_TO) < 0) {
    close(fd_);
    fd_ = -1;
  }
}

UdevNetdevWatch::~UdevNetdevWatch() {
  if (fd_ >= 0) {
    close(fd_);
  }
}

std::vector<int> UdevNetdevWatch::drain(bool* overflowed) {
  std::vector<int> out;
  *overflowed = false;
  alignas(inotify_event) char buf[4096];
  for (;;) {
    const ssize_t n = read(fd_, buf, sizeof buf);
    if (n <= 0) {
      break;
    }
    for (ssize_t off = 0; off < n;) {
      const auto* e = reinterpret_cast<const inotify_event*>(buf + off);  // NOLINT: kernel ABI
      *overflowed = *overflowed || (e->mask & IN_Q_OVERFLOW) != 0;
      // Netdevs are "n<ifindex>"; other devices (b, c, +subsystem:...) are not ours.
      if (e->len > 1 && e->name[0] == 'n' &&
          std::isdigit(static_cast<unsigned char>(e->name[1])) != 0) {
        char* end = nullptr;
        const long ifindex = std::strtol(e->name + 1, &end, 10);
        if (end != nullptr && *end == '\0' && ifindex > 0) {
          out.push_back(static_cast<int>(ifindex));
        }
      }
      off += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
    }
  }
  return out;
}

}  // namespace vfready::host
