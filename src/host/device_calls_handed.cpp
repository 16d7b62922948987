// SPDX-License-Identifier: Apache-2.0
// Calls left behind in a worker process, handed to the daemon's DeviceCalls.
#include <sys/epoll.h>
#include <unistd.h>

#include <cstring>

#include "vfready/host/device_calls.hpp"

namespace vfready::host {

namespace {

template <class T>
void put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);  // NOLINT: bytes of a number
}

template <class T>
bool get(std::string_view& in, T* v) {
  if (in.size() < sizeof *v) {
    return false;
  }
  std::memcpy(v, in.data(), sizeof *v);
  in.remove_prefix(sizeof *v);
  return true;
}

bool get_text(std::string_view& in, std::string* s) {
  uint32_t n = 0;
  if (!get(in, &n) || in.size() < n) {
    return false;
  }
  s->assign(in.substr(0, n));
  in.remove_prefix(n);
  return true;
}

}  // namespace

std::string encode_stuck(const StuckCall& call) {
  std::string out;
  for (const auto* text : {&call.device, &call.call}) {
    put(out, static_cast<uint32_t>(text->size()));
    out += *text;
  }
  put(out, static_cast<int64_t>(call.deadline.count()));
  put(out, static_cast<int64_t>(call.since.time_since_epoch().count()));
  put(out, static_cast<uint8_t>(call.untaken));
  put(out, static_cast<int32_t>(call.helper_pid));
  return out;
}

std::optional<StuckCall> decode_stuck(std::string_view bytes) {
  StuckCall call;
  int64_t deadline = 0;
  int64_t since = 0;
  uint8_t untaken = 0;
  int32_t pid = 0;
  if (!get_text(bytes, &call.device) || !get_text(bytes, &call.call) || !get(bytes, &deadline) ||
      !get(bytes, &since) || !get(bytes, &untaken) || !get(bytes, &pid) || !bytes.empty()) {
    return std::nullopt;
  }
  call.deadline = std::chrono::milliseconds(deadline);
  call.since = Clock::time_point(Clock::duration(since));
  call.untaken = untaken != 0;
  call.helper_pid = pid;
  return call;
}

void DeviceCalls::forked() {
  std::lock_guard lock(mu_);
  spawner_ = -1;
  idle_.clear();
  spawned_.clear();
  returns_ = -1;
  told_ = -1;
  blind_ = false;
  returned_.clear();
  forked_ = true;
  for (auto& l : left_behind_) {
    l.helper.fd = -1;  // the owner's: never read here (reap_locked() passes it by)
  }
}

std::vector<DeviceCalls::HandedCall> DeviceCalls::hand_over() {
  std::lock_guard lock(mu_);
  std::vector<HandedCall> out;
  std::erase_if(left_behind_, [&](LeftBehind& l) {
    if (l.helper.fd < 0) {
      return false;
    }
    if (returns_ >= 0) {
      ::epoll_ctl(returns_, EPOLL_CTL_DEL, l.helper.fd, nullptr);
    }
    out.push_back({l.helper.fd, l.call});
    return true;
  });
  return out;
}

void DeviceCalls::adopt(HandedCall handed) {
  std::lock_guard lock(mu_);
  leave_behind_locked({handed.fd}, std::move(handed.call));
}

}  // namespace vfready::host
