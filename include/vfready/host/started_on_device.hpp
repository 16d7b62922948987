// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <functional>
#include <utility>
#include <vector>

#include "vfready/host/clock.hpp"
#include "vfready/host/device_calls.hpp"
#include "vfready/host/started_call.hpp"

namespace vfready::host {

// A call DeviceCalls started in a helper, its answer judged by `judge` (which may ask
// the host more) once it has come; `finish` is DeviceCalls::finish, or what stands for
// it (Sysfs::finish_on_device).
template <class T>
class StartedOnDevice final : public StartedCall<T> {
 public:
  using Finish = std::function<std::vector<DeviceOpResult>(DeviceCalls::Pending)>;
  using Judge = std::function<T(const std::vector<DeviceOpResult>&)>;
  StartedOnDevice(Finish finish, DeviceCalls::Started call, Judge judge)
      : finish_(std::move(finish)), call_(std::move(call)), judge_(std::move(judge)) {}
  [[nodiscard]] int fd() const override { return call_.pending ? call_.pending->fd() : -1; }
  [[nodiscard]] Clock::time_point until() const override {
    return call_.pending ? call_.pending->until() : Clock::time_point{};
  }
  T finish() override {
    if (call_.pending) {
      call_.answer = finish_(std::move(*call_.pending));
      call_.pending.reset();  // finished once: a second finish has the answer kept
    }
    return judge_(call_.answer);
  }

 private:
  Finish finish_;
  DeviceCalls::Started call_;
  Judge judge_;
};

}  // namespace vfready::host
