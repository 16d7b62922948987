// SPDX-License-Identifier: Apache-2.0
#include "notify_socket.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace vfready::testing {

namespace {

bool carries(const std::string& datagram, const std::string& assignment) {
  std::size_t start = 0;
  while (start <= datagram.size()) {
    auto end = datagram.find('\n', start);
    if (end == std::string::npos) {
      end = datagram.size();
    }
    if (datagram.compare(start, std::min(end - start, assignment.size()), assignment) == 0 &&
        end - start >= assignment.size()) {
      return true;
    }
    start = end + 1;
  }
  return false;
}

}  // namespace

NotifySocket::NotifySocket(const std::string& name) {
  char dir[] = "/tmp/vfready-notify-XXXXXX";
  if (mkdtemp(dir) == nullptr) {
    throw std::runtime_error("mkdtemp failed");
  }
  dir_ = dir;
  path_ = dir_ + "/" + name;
  if (const auto slash = name.rfind('/'); slash != std::string::npos) {
    mkdir((dir_ + "/" + name.substr(0, slash)).c_str(), 0755);
  }
  fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
  if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    throw std::runtime_error("cannot bind " + path_);
  }
  stop_fd_ = eventfd(0, EFD_CLOEXEC);
  reader_ = std::thread([this] { read_loop(); });
}

NotifySocket::~NotifySocket() {
  const uint64_t one = 1;
  static_cast<void>(write(stop_fd_, &one, sizeof one));
  reader_.join();
  close(stop_fd_);
  close(fd_);
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void NotifySocket::read_loop() {
  char buf[4096];
  while (true) {
    pollfd fds[2] = {{fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    poll(fds, 2, -1);
    if ((fds[1].revents & POLLIN) != 0) {
      return;
    }
    const ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n >= 0) {
      std::lock_guard lock(mu_);
      received_.emplace_back(buf, static_cast<std::size_t>(n));
      cv_.notify_all();
    }
  }
}

std::vector<std::string> NotifySocket::received() {
  std::lock_guard lock(mu_);
  return received_;
}

bool NotifySocket::wait_for(const std::string& assignment, std::chrono::milliseconds bound,
                            std::size_t from) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, bound, [&] {
    return std::any_of(
        received_.begin() + static_cast<std::ptrdiff_t>(std::min(from, received_.size())),
        received_.end(), [&](const std::string& d) { return carries(d, assignment); });
  });
}

bool NotifySocket::wait_for_text(const std::string& text, std::chrono::milliseconds bound,
                                 std::size_t from) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, bound, [&] {
    return std::any_of(
        received_.begin() + static_cast<std::ptrdiff_t>(std::min(from, received_.size())),
        received_.end(), [&](const std::string& d) { return d.find(text) != std::string::npos; });
  });
}

std::size_t NotifySocket::count() {
  std::lock_guard lock(mu_);
  return received_.size();
}

std::size_t NotifySocket::count(const std::string& assignment) {
  std::lock_guard lock(mu_);
  return static_cast<std::size_t>(
      std::count_if(received_.begin(), received_.end(),
                    [&](const std::string& d) { return carries(d, assignment); }));
}

}  // namespace vfready::testing
