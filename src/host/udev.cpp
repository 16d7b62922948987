// SPDX-License-Identifier: Apache-2.0
// The daemon's only user of libudev.
#include "vfready/host/udev.hpp"

#include <libudev.h>
#include <poll.h>

#include <cerrno>
#include <charconv>
#include <stdexcept>

namespace vfready::host {

namespace {

// Room for the burst of a bring-up (every VF's add and move) while nobody reads.
constexpr int kReceiveBuffer = 16 * 1024 * 1024;

int number(const char* text) {
  int value = 0;
  if (text != nullptr) {
    const std::string_view s(text);
    std::from_chars(s.data(), s.data() + s.size(), value);
  }
  return value;
}

}  // namespace

struct UdevMonitor::State {
  udev* context = nullptr;
  udev_monitor* monitor = nullptr;
  bool active = false;
  ~State() {
    udev_monitor_unref(monitor);
    udev_unref(context);
  }
};

UdevMonitor::UdevMonitor() : state_(std::make_unique<State>()) {
  auto& s = *state_;
  s.context = udev_new();
  if (s.context == nullptr) {
    throw std::runtime_error("libudev: cannot make a context");
  }
  udev_queue* queue = udev_queue_new(s.context);
  s.active = queue != nullptr && udev_queue_get_udev_is_active(queue) != 0;
  udev_queue_unref(queue);
  s.monitor = udev_monitor_new_from_netlink(s.context, "udev");
  if (s.monitor == nullptr ||
      udev_monitor_filter_add_match_subsystem_devtype(s.monitor, "net", nullptr) < 0 ||
      udev_monitor_enable_receiving(s.monitor) < 0) {
    throw std::runtime_error("libudev: cannot make a monitor of udev's netdev events");
  }
  // Capped at rmem_max without CAP_NET_ADMIN; the monitor reports a lost event either way.
  udev_monitor_set_receive_buffer_size(s.monitor, kReceiveBuffer);
}

UdevMonitor::~UdevMonitor() = default;

int UdevMonitor::fd() const { return udev_monitor_get_fd(state_->monitor); }

bool UdevMonitor::udev_active() const { return state_->active; }

std::vector<UdevNetdevEvent> UdevMonitor::drain(bool* overflowed) {
  std::vector<UdevNetdevEvent> out;
  *overflowed = false;
  for (;;) {
    errno = 0;
    udev_device* device = udev_monitor_receive_device(state_->monitor);
    if (device == nullptr) {
      if (errno == ENOBUFS) {
        *overflowed = true;
        continue;
      }
      // EAGAIN: nothing more waits. A message libudev refused (not from udevd, wrong
      // magic) also ends up here with the socket still readable: the next poll returns.
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == 0) {
        break;
      }
      continue;
    }
    UdevNetdevEvent e;
    const char* action = udev_device_get_action(device);
    e.action = action != nullptr ? action : "";
    e.ifindex = number(udev_device_get_property_value(device, "IFINDEX"));
    const char* name = udev_device_get_sysname(device);
    e.name = name != nullptr ? name : "";
    udev_device_unref(device);
    if (e.ifindex > 0) {
      out.push_back(std::move(e));
    }
  }
  return out;
}

bool UdevMonitor::initialized(int ifindex) const {
  const auto id = "n" + std::to_string(ifindex);
  udev_device* device = udev_device_new_from_device_id(state_->context, id.c_str());
  if (device == nullptr) {
    return false;  // gone, or not in this namespace
  }
  const bool done = udev_device_get_is_initialized(device) > 0;
  udev_device_unref(device);
  return done;
}

LibudevWait::LibudevWait() = default;
LibudevWait::~LibudevWait() = default;

void LibudevWait::drain_locked() {
  bool overflowed = false;
  for (const auto& e : monitor_.drain(&overflowed)) {
    if (e.action != "remove") {
      initialized_.insert(e.ifindex);
    }
  }
  // A lost event only makes a waiter look the device up (below) or wait its bound.
  static_cast<void>(overflowed);
}

bool LibudevWait::wait_initialized(int ifindex, Netdev netdev,
                                   std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mu_);
  if (!monitor_.udev_active()) {
    return true;  // no udevd: nobody to wait for
  }
  drain_locked();
  if (initialized_.contains(ifindex)) {
    return true;
  }
  // A netdev that was there before the pass may have been initialized long ago.
  if (netdev == Netdev::kExisting && monitor_.initialized(ifindex)) {
    initialized_.insert(ifindex);
    return true;
  }
  while (!initialized_.contains(ifindex)) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      // Missed events (an overrun) must not cost a good netdev its bound.
      return monitor_.initialized(ifindex);
    }
    if (polling_) {
      cv_.wait_until(lock, deadline);
    } else {
      // One waiter polls the monitor for all; the others wake when it has read.
      polling_ = true;
      lock.unlock();
      pollfd p{monitor_.fd(), POLLIN, 0};
      static_cast<void>(poll(&p, 1, static_cast<int>(left.count())));
      lock.lock();
      polling_ = false;
      drain_locked();
      cv_.notify_all();
    }
  }
  return true;
}

}  // namespace vfready::host
