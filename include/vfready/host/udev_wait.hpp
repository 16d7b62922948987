// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "vfready/host/clock.hpp"
#include "vfready/model/pci_address.hpp"

// Waiting for udev to finish with a netdev (its add event processed, renames
// included), event driven: the caller waits on an event fd and its own bounds.
namespace vfready::host {

// A netdev as udev announced it, once udevd was done with it.
struct AddedNetdev {
  int ifindex = 0;
  std::string name;
};

class UdevWait {
 public:
  // Whether the netdev was made by this pass (its udev event is still to come) or was
  // there before it (udev may have finished with it long ago).
  enum class Netdev { kNew, kExisting };
  virtual ~UdevWait() = default;
  // Forgets what was announced for `pci`: its netdev `ifindex` (0: not known) is about
  // to go (an unbind), and an add of it heard later is not taken for the next one's.
  virtual void forget_added(const model::PciAddress& /*pci*/, int /*ifindex*/) {}

  // Nothing here blocks: a caller waits on the fd below (with what else it waits on) and
  // looks again.
  // An eventfd of the caller's own that turns readable when an event is heard of a PCI
  // function it watches, or events were lost (the caller reads it to clear it); -1 when
  // nothing is ever heard (deadlines alone move the caller on). unsubscribe() closes it.
  virtual int subscribe() { return -1; }
  virtual void unsubscribe(int /*fd*/) {}
  // The netdev events of PCI function `pci` (a VF) wake `fd` from now on, and so do those
  // of netdev `ifindex` (once known), named as `pci`'s: a netdev's DEVPATH need not be
  // under its function (a virtual one's is not).
  virtual void watch(int /*fd*/, const model::PciAddress& /*pci*/) {}
  virtual void watch_netdev(int /*fd*/, const model::PciAddress& /*pci*/, int /*ifindex*/) {}
  // The events of `pci`, and of its netdev `ifindex` (0: none watched), no longer wake
  // `fd` (its wait is over: the pass's own renames that follow would only wake it).
  virtual void unwatch(int /*fd*/, const model::PciAddress& /*pci*/, int /*ifindex*/) {}
  // The watched PCI functions whose events woke `fd` since the last call, each once; true
  // when events were lost meanwhile (every netdev is to be looked at again).
  virtual bool take_woken(int /*fd*/, std::vector<model::PciAddress>* /*pcis*/) { return false; }
  // What udev's add said of `pci` (a PCI function, the device its DEVPATH is under) since
  // the pass began listening: the netdev, initialized, and taken (a later probe of the
  // function waits for its own). Or
  // nothing: with *look set when no add is to be waited for (no udevd, events lost, two
  // netdevs announced, none heard after a wait that timed out), so that the caller looks
  // in sysfs; else the add has not come yet.
  virtual std::optional<AddedNetdev> take_added(const model::PciAddress& /*pci*/, bool* look) {
    *look = true;
    return std::nullopt;
  }
  // A wait for an add reached its bound in vain.
  virtual void add_missed() {}
  // When udev's last add of a PCI function's netdev was heard (any function's; the
  // epoch for none). While adds come, udev is behind with its queue rather than silent.
  virtual Clock::time_point last_add() { return {}; }
  // Whether udev is done with `ifindex`, by what was heard; with `ask`, libudev is asked
  // too (a waiter asks after a second and at its bound, an event may have been missed;
  // one for a netdev that was there before the pass asks at once). Once events were
  // lost, it is always asked.
  virtual bool initialized_now(int ifindex, Netdev netdev, bool ask) = 0;
};

}  // namespace vfready::host
