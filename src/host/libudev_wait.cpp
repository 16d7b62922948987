// SPDX-License-Identifier: Apache-2.0
// A pass's wait for udev: the netdev events the daemon's one reader hears, handed to the
// PFs' passes whose netdev they name; libudev asked (through UdevDevices) where events may
// have gone unheard.
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <system_error>

#include "vfready/host/udev.hpp"

namespace vfready::host {

LibudevWait::LibudevWait(std::shared_ptr<UdevEventReader> reader) : reader_(std::move(reader)) {
  if (!reader_) {
    throw std::runtime_error("libudev: cannot make a monitor of udev's netdev events");
  }
  if (devices_.udev_active() && !reader_->hearing()) {
    lost_ = 1;  // udevd runs, but its events do not reach the reader: ask libudev
  }
  reader_->attach(this);
}

LibudevWait::~LibudevWait() {
  reader_->detach(this);
  for (const int fd : subscribers_) {
    ::close(fd);
  }
}

int LibudevWait::subscribe() {
  const int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) {
    throw std::system_error(errno, std::generic_category(), "eventfd");
  }
  subscribers_.push_back(fd);
  return fd;
}

void LibudevWait::unsubscribe(int fd) {
  if (std::erase(subscribers_, fd) > 0) {
    std::erase_if(watchers_, [fd](const auto& w) { return w.second == fd; });
    std::erase_if(netdev_watchers_, [fd](const auto& w) { return w.second.first == fd; });
    woken_.erase(fd);
    woken_all_.erase(fd);
    ::close(fd);
  }
}

void LibudevWait::watch(int fd, const model::PciAddress& pci) { watchers_[pci] = fd; }

void LibudevWait::watch_netdev(int fd, const model::PciAddress& pci, int ifindex) {
  netdev_watchers_.insert_or_assign(ifindex, std::pair{fd, pci});
}

void LibudevWait::unwatch(int fd, const model::PciAddress& pci, int ifindex) {
  if (const auto it = watchers_.find(pci); it != watchers_.end() && it->second == fd) {
    watchers_.erase(it);
  }
  if (const auto it = netdev_watchers_.find(ifindex);
      it != netdev_watchers_.end() && it->second.first == fd && it->second.second == pci) {
    netdev_watchers_.erase(it);
  }
}

bool LibudevWait::take_woken(int fd, std::vector<model::PciAddress>* pcis) {
  pcis->clear();
  if (auto it = woken_.find(fd); it != woken_.end()) {
    std::swap(*pcis, it->second);  // each keeps its room for the next turn
    // Each once (a function's events may have come many times since the last turn).
    std::sort(pcis->begin(), pcis->end());
    pcis->erase(std::unique(pcis->begin(), pcis->end()), pcis->end());
  }
  return woken_all_.erase(fd) > 0;
}

namespace {

// `v` with `x` in it, once (the subscribers: one a PF's pass).
template <class T>
void add_once(std::vector<T>& v, const T& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) {
    v.push_back(x);
  }
}

}  // namespace

bool LibudevWait::is_initialized(int ifindex) const {
  return std::binary_search(initialized_.begin(), initialized_.end(), ifindex);
}

void LibudevWait::mark_initialized(int ifindex) {
  // Sorted; netdevs come with ever higher ifindexes, so an insert is mostly an append.
  if (const auto it = std::lower_bound(initialized_.begin(), initialized_.end(), ifindex);
      it == initialized_.end() || *it != ifindex) {
    initialized_.insert(it, ifindex);
  }
}

std::optional<AddedNetdev> LibudevWait::take_added(const model::PciAddress& pci, bool* look) {
  // Nothing to wait for without udevd, once events were lost, or once a
  // wait timed out with no add heard at all.
  *look = !devices_.udev_active() || lost_ != 0 || (add_missed_ && adds_heard_ == 0);
  const auto it = added_.find(pci);
  if (*look || it == added_.end()) {
    return std::nullopt;
  }
  std::optional<AddedNetdev> out;
  if (it->second.ambiguous) {
    *look = true;
  } else {
    out = std::move(it->second.netdev);
  }
  added_.erase(it);
  return out;
}

Clock::time_point LibudevWait::last_add() { return last_add_; }

void LibudevWait::add_missed() { add_missed_ = true; }

bool LibudevWait::initialized_now(int ifindex, Netdev /*netdev*/, bool ask) {
  if (!devices_.udev_active() || is_initialized(ifindex)) {
    return true;
  }
  // Once events were lost, every look asks libudev, as the event may be among them.
  if ((ask || lost_ != 0) && devices_.initialized(ifindex)) {
    mark_initialized(ifindex);
    return true;
  }
  return false;
}

void LibudevWait::hear(const std::vector<UdevNetdevEvent>& events, bool overflowed) {
  auto& wake = wake_;  // the subscribers an event concerns
  wake.clear();
  for (const auto& e : events) {
    if (e.action == "remove") {
      std::erase_if(added_, [&](const auto& a) { return a.second.netdev.ifindex == e.ifindex; });
      going_.erase(e.ifindex);
      continue;
    }
    mark_initialized(e.ifindex);
    const auto pci = pci_of_netdev_devpath(e.devpath);
    if (const auto it = pci ? watchers_.find(*pci) : watchers_.end(); it != watchers_.end()) {
      add_once(wake, it->second);
      woken_[it->second].push_back(*pci);
    }
    if (const auto it = netdev_watchers_.find(e.ifindex); it != netdev_watchers_.end()) {
      add_once(wake, it->second.first);
      woken_[it->second.first].push_back(it->second.second);
    }
    if (e.action != "add") {
      continue;
    }
    if (pci && !going_.contains(e.ifindex)) {
      ++adds_heard_;
      last_add_ = Clock::now();
      // Two netdevs of one function (an IPoIB child beside its parent): which is the
      // probe's is for sysfs to say.
      auto [it, fresh] = added_.try_emplace(*pci, Added{{e.ifindex, e.name}});
      if (!fresh && it->second.netdev.ifindex != e.ifindex) {
        it->second.ambiguous = true;
      }
    }
  }
  const uint64_t one = 1;
  if (overflowed) {
    woken_all_.insert(subscribers_.begin(), subscribers_.end());
  }
  if (overflowed) {
    wake.assign(woken_all_.begin(), woken_all_.end());
  }
  for (const int fd : wake) {
    static_cast<void>(::write(fd, &one, sizeof one));
  }
  if (overflowed) {
    ++lost_;  // lost events: every waiter looks its netdev up again, asking libudev
  }
}

void LibudevWait::forget_added(const model::PciAddress& pci, int ifindex) {
  added_.erase(pci);
  if (ifindex > 0) {
    going_.insert(ifindex);  // until its remove is heard
  }
}

}  // namespace vfready::host
