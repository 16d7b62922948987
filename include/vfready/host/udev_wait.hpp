// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>

// Waiting for udev to finish with a netdev (its add event processed, renames
// included), event driven, bounded by a deadline.
namespace vfready::host {

class UdevWait {
 public:
  // Whether the netdev was made by this pass (its udev event is still to come) or was
  // there before it (udev may have finished with it long ago).
  enum class Netdev { kNew, kExisting };
  virtual ~UdevWait() = default;
  // True once the netdev is initialized; false at the deadline.
  virtual bool wait_initialized(int ifindex, Netdev netdev,
                                std::chrono::steady_clock::time_point deadline) = 0;
};

}  // namespace vfready::host
