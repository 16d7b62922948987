// SPDX-License-Identifier: Apache-2.0
// DeviceCalls' calls left behind: which devices they keep stuck, which helper makes each
// and in what state it is, and which have returned.
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>

#include "device_call_helper.hpp"
#include "vfready/host/device_calls.hpp"

namespace vfready::host {

namespace {

// A stuck call with its helper's state as /proc has it now: 'D' (in the kernel), 'T'
// (stopped), ... ; none when the process is not a helper (gone, its pid taken again).
StuckCall as_now(StuckCall call) {
  if (call.helper_pid <= 0) {
    return call;
  }
  std::ifstream in("/proc/" + std::to_string(call.helper_pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');
  if (stat.find(" (vfready-call) ") == std::string::npos || close == std::string::npos ||
      close + 2 >= stat.size()) {
    return call;
  }
  call.helper_state = stat[close + 2];
  return call;
}

}  // namespace

void DeviceCalls::reap_locked() {
  if (forked_) {
    // A worker's copy hears no return: the calls it leaves behind are handed over
    // whole, and their owner hears them return (an answer already waiting, at once).
    return;
  }
  std::vector<char> answer;
  for (auto it = left_behind_.begin(); it != left_behind_.end();) {
    pollfd p{it->helper.fd, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) {
      ++it;
      continue;
    }
    answer.resize(helper::max_answer());
    const ssize_t n = ::recv(it->helper.fd, answer.data(), answer.size(), MSG_DONTWAIT);
    std::vector<DeviceOpResult> got;
    int err = kHelperGone;  // it died without answering
    if (n > 0 && helper::decode(answer.data(), static_cast<std::size_t>(n), &got)) {
      err = 0;
      for (const auto& r : got) {
        err = err != 0 ? err : r.err;
      }
    }
    if (returns_ >= 0) {
      ::epoll_ctl(returns_, EPOLL_CTL_DEL, it->helper.fd, nullptr);
    }
    ::close(it->helper.fd);  // it exits: one that was stuck once is not used again
    returned_.push_back({std::move(it->call), err});
    tell_returned_locked();
    it = left_behind_.erase(it);
  }
}

std::optional<StuckCall> DeviceCalls::stuck(const std::string& device) {
  std::lock_guard lock(mu_);
  reap_locked();
  for (const auto& l : left_behind_) {
    if (l.call.device == device) {
      return as_now(l.call);
    }
  }
  return std::nullopt;
}

std::vector<ReturnedCall> DeviceCalls::collect() {
  std::lock_guard lock(mu_);
  reap_locked();
  std::vector<ReturnedCall> out;
  out.swap(returned_);
  uint64_t count = 0;
  if (told_ >= 0) {
    static_cast<void>(::read(told_, &count, sizeof count));  // nothing to tell now
  }
  return out;
}

void DeviceCalls::leave_behind_locked(Helper helper, StuckCall call) {
  if (returns_ >= 0) {
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.fd = helper.fd;
    // A socket the set cannot take (out of memory, past max_user_watches) would return
    // unheard: returns_fd() then says there is no such descriptor any more.
    blind_ = blind_ || ::epoll_ctl(returns_, EPOLL_CTL_ADD, helper.fd, &e) != 0;
  }
  left_behind_.push_back({helper, std::move(call)});
}

void DeviceCalls::tell_returned_locked() {
  const uint64_t one = 1;
  if (told_ >= 0) {
    static_cast<void>(::write(told_, &one, sizeof one));
  }
}

int DeviceCalls::returns_fd() {
  std::lock_guard lock(mu_);
  if (returns_ >= 0 || blind_) {
    return blind_ ? -1 : returns_;
  }
  told_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  returns_ = told_ < 0 ? -1 : ::epoll_create1(EPOLL_CLOEXEC);
  if (returns_ < 0) {
    if (told_ >= 0) {
      ::close(told_);
      told_ = -1;
    }
    return -1;
  }
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.fd = told_;
  blind_ = ::epoll_ctl(returns_, EPOLL_CTL_ADD, told_, &e) != 0;
  for (const auto& l : left_behind_) {
    e.data.fd = l.helper.fd;
    blind_ = blind_ || ::epoll_ctl(returns_, EPOLL_CTL_ADD, l.helper.fd, &e) != 0;
  }
  if (!returned_.empty()) {
    tell_returned_locked();
  }
  return blind_ ? -1 : returns_;
}

}  // namespace vfready::host
