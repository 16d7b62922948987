// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vfready/host/clock.hpp"
#include "vfready/host/udev_message.hpp"
#include "vfready/host/udev_wait.hpp"

// udev through libudev: whether udev has initialized a netdev, and udev's events about
// netdevs as a monitor receives them (the "udev" source: sent once udevd has processed
// the device, renames included). libudev reads /sys and /run/udev itself; vfready reads
// neither of udev's files.
namespace vfready::host {

// The PCI function a netdev's DEVPATH is under ("/devices/.../0000:10:00.1/net/ib0"),
// nothing when it is not one's.
std::optional<model::PciAddress> pci_of_netdev_devpath(std::string_view devpath);

// A monitor of udev's netdev events. Not thread-safe.
class UdevMonitor {
 public:
  UdevMonitor();  // throws std::runtime_error when libudev cannot make one
  ~UdevMonitor();
  UdevMonitor(const UdevMonitor&) = delete;
  UdevMonitor& operator=(const UdevMonitor&) = delete;
  // Readable when events wait.
  [[nodiscard]] int fd() const;
  // The events that wait, at most `most` messages (never blocks); `overflowed` when some
  // were lost.
  std::vector<UdevNetdevEvent> drain(bool* overflowed, std::size_t most = SIZE_MAX);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Whether udev has initialized a netdev, looked up by libudev (its database entry).
// Not thread-safe.
class UdevDevices {
 public:
  UdevDevices();  // throws std::runtime_error when libudev cannot make a context
  ~UdevDevices();
  UdevDevices(const UdevDevices&) = delete;
  UdevDevices& operator=(const UdevDevices&) = delete;
  // Whether udevd runs here (its control socket exists). Without it nothing initializes
  // devices, and nothing is to be waited for: as `udevadm settle` decides.
  [[nodiscard]] bool udev_active() const;
  [[nodiscard]] bool initialized(int ifindex) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

class LibudevWait;

// The daemon's one monitor of udev's netdev events, read on the daemon's event loop (one
// for the pass and one for the drift watch read and parsed every message twice). Each
// batch read goes to the pass's LibudevWait, if one is listening (which wakes the PF's
// pass whose netdev an event names), then its adds to the loop's own `adds` (the drift
// watch: a netdev a driver reload made).
class UdevEventReader {
 public:
  // The netdevs (ifindexes) a batch's adds name; `overflowed` when events were lost
  // before it.
  using Adds = std::function<void(const std::vector<int>& added, bool overflowed)>;
  UdevEventReader();  // throws std::runtime_error when libudev cannot make a monitor
  ~UdevEventReader();
  UdevEventReader(const UdevEventReader&) = delete;
  UdevEventReader& operator=(const UdevEventReader&) = delete;
  // The monitor's socket: read_some() when it is readable.
  [[nodiscard]] int fd() const { return monitor_.fd(); }
  // Reads what waits, up to a bound (a level-triggered source is called again for the
  // rest, so that a burst of events does not hold the loop), and hands it on. Never
  // blocks. Called on the loop's thread only.
  void read_some(const Adds& adds);
  // False when nothing will be heard: udevd was not running when the monitor was made
  // (libudev then listens to nothing, for the monitor's life).
  [[nodiscard]] bool hearing() const { return hearing_; }

 private:
  friend class LibudevWait;
  // As a pass starts listening and as it ends, on the loop's thread.
  void attach(LibudevWait* wait);
  void detach(LibudevWait* wait);
  // Each listener, then `adds`.
  void tell(const std::vector<UdevNetdevEvent>& events, bool overflowed, const Adds& adds);

  UdevMonitor monitor_;
  std::vector<LibudevWait*> listeners_;
  std::vector<int> added_;  // tell()'s, kept between batches
  const bool hearing_;
};

// UdevWait for all the PFs of a pass (on the loop's thread: the reader tells it, the
// passes ask), over the daemon's reader: a netdev is initialized when udev's
// event for it has come while this listened, or, for one that was there before the
// pass, when libudev says so. The reader wakes the fd that watches the netdev an event
// names (and no other). Make it before the pass creates
// netdevs, so that no event of theirs is missed.
class LibudevWait final : public UdevWait {
 public:
  // Throws std::runtime_error when there is no reader (libudev could not make a monitor).
  explicit LibudevWait(std::shared_ptr<UdevEventReader> reader);
  ~LibudevWait() override;
  LibudevWait(const LibudevWait&) = delete;
  LibudevWait& operator=(const LibudevWait&) = delete;
  void forget_added(const model::PciAddress& pci, int ifindex) override;
  int subscribe() override;
  void unsubscribe(int fd) override;
  void watch(int fd, const model::PciAddress& pci) override;
  void watch_netdev(int fd, const model::PciAddress& pci, int ifindex) override;
  void unwatch(int fd, const model::PciAddress& pci, int ifindex) override;
  bool take_woken(int fd, std::vector<model::PciAddress>* pcis) override;
  std::optional<AddedNetdev> take_added(const model::PciAddress& pci, bool* look) override;
  void add_missed() override;
  Clock::time_point last_add() override;
  bool initialized_now(int ifindex, Netdev netdev, bool ask) override;

 private:
  friend class UdevEventReader;
  // From the reader: events received, `overflowed` when some before them were lost.
  void hear(const std::vector<UdevNetdevEvent>& events, bool overflowed);

  std::shared_ptr<UdevEventReader> reader_;
  UdevDevices devices_;  // udev's database, asked whether udev is done with a netdev
  // Netdevs udev is done with, by the events received so far (sorted).
  std::vector<int> initialized_;
  [[nodiscard]] bool is_initialized(int ifindex) const;
  void mark_initialized(int ifindex);
  std::vector<int> wake_;  // hear()'s: the subscribers its events concern
  struct Added {
    AddedNetdev netdev;
    bool ambiguous = false;  // another netdev was announced for the function too
  };
  std::map<model::PciAddress, Added> added_;  // by PCI function: announced, not taken
  std::set<int> going_;           // netdevs an unbind takes away: their late adds are not taken
  uint64_t adds_heard_ = 0;       // adds with a PCI function, this pass
  Clock::time_point last_add_{};  // when the last of them was heard
  bool add_missed_ = false;       // a wait for an add timed out
  std::vector<int> subscribers_;  // eventfds of the callers that wait on many
  std::map<model::PciAddress, int> watchers_;  // PCI function -> the eventfd its events wake
  std::map<int, std::pair<int, model::PciAddress>>
      netdev_watchers_;  // ifindex -> eventfd, function
  // eventfd -> the functions that woke it (emptied as they are taken, each once)
  std::map<int, std::vector<model::PciAddress>> woken_;
  std::set<int> woken_all_;  // eventfds woken by lost events
  uint64_t lost_ = 0;        // how often events were lost: waiters then look their netdev up
};

}  // namespace vfready::host
