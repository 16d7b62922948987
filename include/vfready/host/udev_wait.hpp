// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <optional>
#include <string>

// Waiting for udev to finish with a netdev (its add event processed, renames
// included), event driven, bounded by a deadline.
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
  // True once the netdev is initialized; false at the deadline.
  virtual bool wait_initialized(int ifindex, Netdev netdev,
                                std::chrono::steady_clock::time_point deadline) = 0;
  // The netdev udev announced (its add) for the PCI function `pci` (the device its
  // DEVPATH is under) since the pass began listening, waited for until `until`, and
  // taken: a later probe of the function waits for its own. It is initialized. Nothing
  // at `until`, where udev does not run, once events were lost, when two netdevs were
  // announced for the function, or at once after a wait that timed out with no add
  // heard at all: the caller then looks in sysfs. (This one announces nothing.)
  virtual std::optional<AddedNetdev> wait_added(const std::string& /*pci*/,
                                                std::chrono::steady_clock::time_point /*until*/) {
    return std::nullopt;
  }
  // Forgets what was announced for `pci`: its netdev `ifindex` (0: not known) is about
  // to go (an unbind), and an add of it heard later is not taken for the next one's.
  virtual void forget_added(const std::string& /*pci*/, int /*ifindex*/) {}
};

}  // namespace vfready::host
