// SPDX-License-Identifier: Apache-2.0
// Calls left behind in a worker process, handed to the daemon's DeviceCalls.
#include <sys/epoll.h>
#include <unistd.h>

#include <stdexcept>

#include "vfready/host/device_calls.hpp"
#include "vfready/model/byte_fields.hpp"

namespace vfready::host {

std::string encode_stuck(const StuckCall& call) {
  model::ByteWriter out;
  out.text(call.device);
  out.text(call.call);
  out.number(static_cast<int64_t>(call.deadline.count()));
  out.number(static_cast<int64_t>(call.since.time_since_epoch().count()));
  out.number(static_cast<uint8_t>(call.untaken));
  out.number(static_cast<int32_t>(call.helper_pid));
  return out.take();
}

std::optional<StuckCall> decode_stuck(std::string_view bytes) {
  try {
    model::ByteReader in(bytes);
    StuckCall call;
    call.device = in.text();
    call.call = in.text();
    call.deadline = std::chrono::milliseconds(in.number<int64_t>());
    call.since = Clock::time_point(Clock::duration(in.number<int64_t>()));
    call.untaken = in.number<uint8_t>() != 0;
    call.helper_pid = in.number<int32_t>();
    if (!in.done()) {
      return std::nullopt;
    }
    return call;
  } catch (const std::out_of_range&) {
    return std::nullopt;
  }
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
