// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vfready/host/clock.hpp"
#include "vfready/host/device_op.hpp"
#include "vfready/host/stuck_call.hpp"

// Calls into a driver that wait on a device lock (sriov_numvfs reads and writes,
// drivers_probe, unbind, autoprobe, OFED's GUID files) made by helper processes under a
// deadline. A driver can hold its lock forever, and a task waiting on it cannot be
// killed: only a helper takes that risk. When a call outlives its deadline, its helper
// is left behind and its device is stuck: every later call for the device answers kStuck
// at once, until the helper's call returns (collect() tells). No thread of the caller
// ever waits in the kernel on the device.
namespace vfready::host {

class DeviceCalls {
 public:
  DeviceCalls() = default;
  ~DeviceCalls();  // idle helpers exit; helpers left behind exit when their call returns
  DeviceCalls(const DeviceCalls&) = delete;
  DeviceCalls& operator=(const DeviceCalls&) = delete;

  // At most this many ops go in one started call (one message to a helper).
  static constexpr std::size_t kMaxOps = 14;

  // A call under way in a helper: `fd` turns readable when the helper has answered.
  // Move-only; a Pending dropped without finish() loses its helper (it exits).
  struct Pending {
    Pending() = default;
    Pending(Pending&& other) noexcept { *this = std::move(other); }
    Pending& operator=(Pending&& other) noexcept;
    Pending(const Pending&) = delete;
    Pending& operator=(const Pending&) = delete;
    ~Pending();
    [[nodiscard]] int fd() const { return fd_; }
    [[nodiscard]] Clock::time_point until() const { return until_; }

   private:
    friend class DeviceCalls;
    int fd_ = -1;
    std::size_t ops_ = 0;
    std::string device_;
    // What was sent (helper::encode): described only should it be left behind.
    std::string request_;
    std::chrono::milliseconds deadline_{0};
    Clock::time_point started_;
    Clock::time_point until_;
    Clock::time_point sent_;     // when the request went into the socket
    bool from_spawner_ = false;  // a helper just asked of the spawner, not yet heard from
    int helper_pid_ = 0;         // its helper's process, where known yet
    uint32_t serial_ = 0;        // its helper's number with the spawner (0: not its)
  };
  // What start() gives: the call under way, or (no call made) its answer at once: kStuck
  // when the device is stuck, the errno when no helper could be had.
  struct Started {
    std::optional<Pending> pending;
    std::vector<DeviceOpResult> answer;
  };

  // Starts `ops` (1 to kMaxOps) in order in one helper; it stops after the first write
  // that fails. Never waits on the device. Safe from any thread. A file's path is taken
  // under `root` when one is given ("ROOT/" and the op's path, as the helper opens it; an
  // empty root gives "/" and the path).
  Started start(const std::string& device, std::span<const DeviceOp> ops,
                std::chrono::milliseconds deadline, std::optional<std::string_view> root = {});
  // A started call's answer: one result per op run. Call it once `fd` is readable, or at
  // `until`: a call that has not answered by then is left behind, its device is stuck,
  // and its last result is kStuck. Never waits.
  std::vector<DeviceOpResult> finish(Pending call);

  // start(), a wait for the answer (bounded by `deadline`, over every op), finish(); any
  // number of ops, kMaxOps to a message. When the device is stuck, or becomes stuck
  // because the calls outlive `deadline`, the last result is kStuck. Safe from any
  // thread; for callers that may wait (on the loop only where docs/development.md says).
  std::vector<DeviceOpResult> run(const std::string& device, std::span<const DeviceOp> ops,
                                  std::chrono::milliseconds deadline,
                                  std::optional<std::string_view> root = {});
  // Starts a spawner and takes its helpers from it (use_spawner): best while the
  // process is small and has one thread (vfreadyd starts one before its service). False
  // when it could not be started: helpers are then forks of the caller, as before.
  bool start_spawner();
  // Helpers from now on come from the spawner on `spawner` (helper_spawner.hpp; taken:
  // closed with this object), or, once it is gone, from forks of the caller.
  void use_spawner(int spawner);
  // Ends the idle helpers (they exit); the next calls spawn new ones. A helper is a fork
  // of the daemon and keeps the pages the daemon has written since as its own copies:
  // the daemon ends them when a pass is over, rather than keep a pool of old images.
  void close_idle();
  // The call that keeps `device` stuck, if one does.
  std::optional<StuckCall> stuck(const std::string& device);
  // The calls left behind that have returned since the last collect(): their devices
  // are no longer stuck.
  std::vector<ReturnedCall> collect();
  // A descriptor that is readable while collect() has something to tell: a helper left
  // behind has answered (its socket is in the set) or died, or a helper died mid-call.
  // The daemon's loop watches it for life, and collects when it turns readable: a stuck
  // PF is brought up again as its call returns. Made at the first ask; -1 when it cannot
  // be made (out of descriptors), or once a left-behind socket could not join its set:
  // the caller then looks (collect()) from time to time instead.
  int returns_fd();

  // Calls left behind in a worker process (host::fork_worker) are handed to the owner:
  // - forked(), in the worker (which closed every descriptor of the owner's): this copy
  //   forgets the owner's helpers, spawner and sets without closing them; devices stuck
  //   stay stuck (their calls are the owner's to hear of), and so do those it leaves
  //   behind itself, returned or not, until they are handed over. Helpers from now on
  //   are the worker's forks.
  // - hand_over(), in the worker: the calls it left behind, each with its helper's socket,
  //   out of this object (the caller sends and closes them).
  // - adopt(), in the owner: such a call, its socket now ours, as if left behind here.
  struct HandedCall {
    int fd = -1;
    StuckCall call;
  };
  void forked();
  std::vector<HandedCall> hand_over();
  void adopt(HandedCall handed);

 private:
  struct Helper {
    int fd = -1;                // our end of its socket
    bool from_spawner = false;  // just asked of the spawner (not one that has answered)
    int pid = 0;                // its process; 0 until the spawner has said
    uint32_t serial = 0;        // what the spawner was asked for it by (0: a fork of ours)
  };
  struct LeftBehind {
    Helper helper;
    StuckCall call;
  };
  Started start_until(const std::string& device, std::span<const DeviceOp> ops,
                      std::chrono::milliseconds deadline, Clock::time_point started,
                      Clock::time_point until, std::optional<std::string_view> root);
  Helper acquire(int* err);
  // A new helper: from the spawner while there is one, else a fork of ours.
  Helper spawn(int* err);
  void release(Helper helper);
  // The spawner helpers are asked of from now on (-1: none, our own forks); the one
  // before, if any, closed. Under mu_.
  void replace_spawner_locked(int spawner);
  void reap_locked();
  // The process of the helper the spawner was asked for as `serial` (0: not known), from
  // what the spawner has said so far. Under mu_.
  int spawned_pid_locked(uint32_t serial);
  // A call left behind, into left_behind_ and the set of returns_fd().
  void leave_behind_locked(Helper helper, StuckCall call);
  // returned_ gained a call: returns_fd() turns readable.
  void tell_returned_locked();

  // The host's readers share the pool: threads of the planner's worker process
  // (host_reader.cpp), each with that process's copy; in vfreadyd itself only the loop
  // calls.
  std::mutex mu_;
  std::vector<Helper> idle_;
  int spawner_ = -1;
  uint32_t last_serial_ = 0;
  // What the spawner said of the helpers it forked and nobody has asked for yet: serial
  // and process, the latest few hundred.
  std::vector<std::pair<uint32_t, int>> spawned_;
  std::vector<LeftBehind> left_behind_;
  std::vector<ReturnedCall> returned_;
  int returns_ = -1;     // epoll set: told_, and the socket of every helper left behind
  int told_ = -1;        // eventfd: returned_ has calls to tell
  bool blind_ = false;   // some left-behind socket is not in returns_
  bool forked_ = false;  // a worker's copy (forked()): reaps nothing
};

}  // namespace vfready::host
