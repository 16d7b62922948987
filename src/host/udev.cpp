// SPDX-License-Identifier: Apache-2.0
// The daemon's only user of libudev.
#include "vfready/host/udev.hpp"

#include <libudev.h>
#include <linux/netlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <new>
#include <span>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include "vfready/host/kernel_calls.hpp"
#include "vfready/host/read_buffer.hpp"
#include "vfready/model/pci_address.hpp"

namespace vfready::host {

namespace {

// Room for the burst of a bring-up (every VF's add and move) while nobody reads.
constexpr int kReceiveBuffer = 16 * 1024 * 1024;
// The longest message udevd sends (sd-device's monitor receives into as many bytes).
constexpr std::size_t kMessageMax = 8192;

enum class Received : uint8_t { kMessage, kLost, kNothing };

// One message from `fd` (into `buf`), taken as sd-device's monitor takes it: a
// multicast to udevd's group (a unicast is from no sender vfready trusts), from root
// (SCM_CREDENTIALS). A netdev's event goes to `out`; anything else is dropped. kLost:
// messages were lost before the next (the socket's buffer overran: ENOBUFS), or this one
// was cut short.
Received receive_one(int fd, std::span<uint8_t> buf, std::vector<UdevNetdevEvent>* out) {
  iovec iov{buf.data(), buf.size()};
  sockaddr_nl from{};
  alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(ucred))> control{};
  msghdr m{};
  m.msg_name = &from;
  m.msg_namelen = sizeof from;
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = control.data();
  m.msg_controllen = control.size();
  const ssize_t n = ::recvmsg(fd, &m, MSG_DONTWAIT);
  if (n < 0) {
    if (errno == ENOBUFS) {
      return Received::kLost;
    }
    return errno == EINTR ? Received::kMessage : Received::kNothing;  // EAGAIN: all read
  }
  const cmsghdr* c = CMSG_FIRSTHDR(&m);
  if (from.nl_groups == 0 || (m.msg_flags & MSG_CTRUNC) != 0 || c == nullptr ||
      c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_CREDENTIALS) {
    return Received::kMessage;
  }
  ucred cred{};
  std::memcpy(&cred, CMSG_DATA(c), sizeof cred);
  if (cred.uid != 0) {
    return Received::kMessage;
  }
  if ((m.msg_flags & MSG_TRUNC) != 0) {
    // Longer than any udevd sends: dropped (as sd-device drops it), and counted as lost,
    // since it might have been a netdev's add.
    return Received::kLost;
  }
  if (auto e = parse_udev_message(buf.first(static_cast<std::size_t>(n)))) {
    out->push_back(std::move(*e));
  }
  return Received::kMessage;
}

}  // namespace

std::optional<model::PciAddress> pci_of_netdev_devpath(std::string_view devpath) {
  const auto net = devpath.rfind("/net/");
  if (net == std::string_view::npos || net == 0) {
    return std::nullopt;
  }
  const auto start = devpath.rfind('/', net - 1);
  const auto pci = model::PciAddress::parse(devpath.substr(start + 1, net - start - 1));
  return pci ? std::optional(pci.value()) : std::nullopt;
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
  ReadBuffer buffer{kMessageMax};  // one message at a time
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

std::vector<UdevNetdevEvent> UdevMonitor::drain(bool* overflowed, std::size_t most) {
  // The messages are read here and parsed by parse_udev_message(), not received through
  // libudev, which builds a device object of every property of each (half of vfready's
  // instructions in a bring-up, under callgrind). libudev made the socket: bound to
  // udevd's group, SO_PASSCRED on, and a kernel filter on the subsystem's hash (which
  // lets through what lacks udevd's magic: the parser checks both).
  std::vector<UdevNetdevEvent> out;
  *overflowed = false;
  const int fd = udev_monitor_get_fd(state_->monitor);
  for (std::size_t n = 0; n < most; ++n) {
    if (const auto read = receive_one(fd, state_->buffer.span(), &out); read == Received::kLost) {
      *overflowed = true;
    } else if (read == Received::kNothing) {
      break;
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

namespace {

// A boolean property of `device` that is set and true (parse_boolean()'s true words).
bool flag_set(udev_device* device, const char* key) {
  const char* value = udev_device_get_property_value(device, key);
  if (value == nullptr) {
    return false;
  }
  const std::string_view v(value);
  return v == "1" || v == "yes" || v == "y" || v == "true" || v == "t" || v == "on";
}

}  // namespace

bool UdevDevices::initialized(int ifindex) const {
  const auto id = "n" + std::to_string(ifindex);
  count(KernelCall::kUdevLookup);
  udev_device* device = udev_device_new_from_device_id(state_->context, id.c_str());
  if (device == nullptr) {
    return false;  // gone, or not in this namespace
  }
  // A database entry says udevd has the netdev, but not yet that it is done: before its
  // own rename udevd writes the entry with ID_RENAMING=1, which the "move" of that rename
  // drops (udev-event.c, rename_netif()); udevd 255 on marks the whole event with
  // ID_PROCESSING=1. systemd-networkd waits out both (device_is_renaming/_processing).
  const bool done = udev_device_get_is_initialized(device) > 0 &&
                    !flag_set(device, "ID_RENAMING") && !flag_set(device, "ID_PROCESSING");
  udev_device_unref(device);
  return done;
}

UdevEventReader::UdevEventReader()
    // libudev gives a monitor made while udevd is not running no multicast group: it
    // hears nothing, even once udevd is up.
    : hearing_(UdevDevices().udev_active()) {}

UdevEventReader::~UdevEventReader() = default;

void UdevEventReader::attach(LibudevWait* wait) { listeners_.push_back(wait); }

void UdevEventReader::detach(LibudevWait* wait) { std::erase(listeners_, wait); }

void UdevEventReader::tell(const std::vector<UdevNetdevEvent>& events, bool overflowed,
                           const Adds& adds) {
  for (auto* l : listeners_) {
    l->hear(events, overflowed);
  }
  auto& added = added_;
  added.clear();
  for (const auto& e : events) {
    if (e.action == "add") {
      added.push_back(e.ifindex);
    }
  }
  if ((overflowed || !added.empty()) && adds) {
    adds(added, overflowed);
  }
}

void UdevEventReader::read_some(const Adds& adds) {
  // A burst is read in slices of this many messages, the loop's other sources served
  // between them.
  constexpr std::size_t kSlice = 256;
  std::vector<UdevNetdevEvent> events;
  bool overflowed = false;
  try {
    events = monitor_.drain(&overflowed, kSlice);
  } catch (const std::bad_alloc&) {
    // What was read is lost, as in an overrun: the listeners look their netdevs up, the
    // loop looks at every PF.
    events.clear();
    overflowed = true;
  }
  // What a listener or `adds` throws is the loop's error handler's, not a lost event.
  tell(events, overflowed, adds);
}

}  // namespace vfready::host
