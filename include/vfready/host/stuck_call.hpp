// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "vfready/host/clock.hpp"

// A device whose driver has not returned from a call: the answer every later call for it
// gets, and what the call was.
namespace vfready::host {

// A call's answer when its device is stuck (this call or an earlier one has not
// returned). Not an errno: those are positive.
inline constexpr int kStuck = -1;
// A call's answer when the helper process making it died before it answered (killed):
// vfready's trouble, not the driver's. The call is among those returned (DeviceCalls::
// collect()), so that its PF is brought up again once its effect is read back.
inline constexpr int kHelperGone = -2;

// A call whose helper was left behind.
struct StuckCall {
  std::string device;  // the key callers gave (a PF's PCI address)
  std::string call;    // "write 8 to /sys/bus/pci/devices/.../sriov_numvfs"
  std::chrono::milliseconds deadline{0};
  Clock::time_point since;
  // No helper took the call up by its deadline (its request was still unread): not the
  // driver, but the process that forks helpers (vfready-spawn) made none. Still left
  // behind: a helper made later makes the call then.
  bool untaken = false;
  // The helper process that makes the call (vfready-call), 0 when not known, and its
  // state as /proc said when this was asked (DeviceCalls::stuck()): 'D' waiting in the
  // kernel (the driver holds it), 'T' stopped (SIGSTOP, a debugger), 0 when not read.
  int helper_pid = 0;
  char helper_state = 0;
};

// A stuck call as bytes (to hand it from a worker process to the daemon), and back:
// nullopt when the bytes are not one.
std::string encode_stuck(const StuckCall& call);
std::optional<StuckCall> decode_stuck(std::string_view bytes);

// A call left behind that has since returned.
struct ReturnedCall {
  StuckCall stuck;
  int err = 0;  // its errno (0: it succeeded after all)
};

}  // namespace vfready::host
