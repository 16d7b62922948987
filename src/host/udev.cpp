// SPDX-License-Identifier: Apache-2.0
// The daemon's only user of libudev.
#include "vfready/host/udev.hpp"

#include <libudev.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <stdexcept>
#include <system_error>

#include "vfready/host/kernel_calls.hpp"
#include "vfready/model/pci_address.hpp"

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

std::string pci_of_netdev_devpath(const std::string& devpath) {
  const auto net = devpath.rfind("/net/");
  if (net == std::string::npos || net == 0) {
    return "";
  }
  const auto start = devpath.rfind('/', net - 1);
  // dddd:bb:dd.f, or a wider domain (VMD): as vfready writes it, or not a PCI function's.
  const auto pci = model::PciAddress::parse(devpath.substr(start + 1, net - start - 1));
  return pci ? pci.value().str() : "";
}

udev* new_context() {
  udev* context = udev_new();
  if (context == nullptr) {
    throw std::runtime_error("libudev: cannot make a context");
  }
  return context;
}

struct UdevMonitor::State {
  udev* context = nullptr;
  udev_monitor* monitor = nullptr;
  ~State() {
    udev_monitor_unref(monitor);
    udev_unref(context);
  }
};

UdevMonitor::UdevMonitor() : state_(std::make_unique<State>()) {
  auto& s = *state_;
  s.context = new_context();
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
    const char* devpath = udev_device_get_devpath(device);
    e.devpath = devpath != nullptr ? devpath : "";
    udev_device_unref(device);
    if (e.ifindex > 0) {
      out.push_back(std::move(e));
    }
  }
  return out;
}

struct UdevDevices::State {
  udev* context = nullptr;
  bool active = false;
  ~State() { udev_unref(context); }
};

UdevDevices::UdevDevices() : state_(std::make_unique<State>()) {
  state_->context = new_context();
  udev_queue* queue = udev_queue_new(state_->context);
  state_->active = queue != nullptr && udev_queue_get_udev_is_active(queue) != 0;
  udev_queue_unref(queue);
}

UdevDevices::~UdevDevices() = default;

bool UdevDevices::udev_active() const { return state_->active; }

bool UdevDevices::initialized(int ifindex) const {
  const auto id = "n" + std::to_string(ifindex);
  count(KernelCall::kUdevLookup);
  udev_device* device = udev_device_new_from_device_id(state_->context, id.c_str());
  if (device == nullptr) {
    return false;  // gone, or not in this namespace
  }
  const bool done = udev_device_get_is_initialized(device) > 0;
  udev_device_unref(device);
  return done;
}

UdevEventReader::UdevEventReader()
    : ready_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      stop_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (ready_fd_ < 0 || stop_fd_ < 0) {
    const int err = errno;
    close(ready_fd_);
    close(stop_fd_);
    throw std::system_error(err, std::generic_category(), "eventfd");
  }
  try {
    // libudev gives a monitor made while udevd is not running no multicast group: it
    // hears nothing, even once udevd is up.
    hearing_ = UdevDevices().udev_active();
    reader_ = std::thread([this] { read_events(); });
  } catch (...) {
    close(ready_fd_);
    close(stop_fd_);
    throw;
  }
}

UdevEventReader::~UdevEventReader() {
  const uint64_t one = 1;
  static_cast<void>(write(stop_fd_, &one, sizeof one));
  reader_.join();
  close(stop_fd_);
  close(ready_fd_);
}

std::vector<UdevNetdevEvent> UdevEventReader::take_adds(bool* overflowed) {
  uint64_t count = 0;
  static_cast<void>(read(ready_fd_, &count, sizeof count));  // readable again at the next add
  std::lock_guard lock(mu_);
  *overflowed = lost_;
  lost_ = false;
  std::vector<UdevNetdevEvent> out;
  out.swap(adds_);
  return out;
}

void UdevEventReader::attach(LibudevWait* wait) {
  std::lock_guard lock(listeners_mu_);
  listeners_.push_back(wait);
}

void UdevEventReader::detach(LibudevWait* wait) {
  std::lock_guard lock(listeners_mu_);  // not while the reader is telling it
  std::erase(listeners_, wait);
}

void UdevEventReader::tell(const std::vector<UdevNetdevEvent>& events, bool overflowed) {
  {
    std::lock_guard lock(listeners_mu_);
    for (auto* l : listeners_) {
      l->hear(events, overflowed);
    }
  }
  bool added = overflowed;
  std::lock_guard lock(mu_);
  for (const auto& e : events) {
    if (e.action == "add" && adds_wanted_) {
      adds_.push_back(e);
      added = true;
    }
  }
  lost_ = lost_ || overflowed;
  if (added) {
    const uint64_t one = 1;
    static_cast<void>(write(ready_fd_, &one, sizeof one));
  }
}

void UdevEventReader::read_events() {
  std::array<pollfd, 2> fds{{{monitor_.fd(), POLLIN, 0}, {stop_fd_, POLLIN, 0}}};
  for (;;) {
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) {
        continue;
      }
      // Cannot happen with these fds; should it, every listener is told events were
      // lost (waiters look their netdevs up), the loop reconciles, and passes to come
      // look in sysfs and ask libudev.
      hearing_ = false;
      tell({}, /*overflowed=*/true);
      return;
    }
    if ((fds[1].revents & POLLIN) != 0) {
      return;
    }
    try {
      bool overflowed = false;
      const auto events = monitor_.drain(&overflowed);
      tell(events, overflowed);
    } catch (const std::exception&) {
      // Out of memory, say: what was read is lost, as in an overrun.
      try {
        tell({}, /*overflowed=*/true);
      } catch (const std::exception&) {
        hearing_ = false;  // not even that: passes to come look for themselves
        return;
      }
    }
  }
}

}  // namespace vfready::host
