// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

// The spawner of DeviceCalls' helpers: a small process, forked from vfreadyd as it
// starts (before its threads, its passes' memory and its libraries' state), that forks
// a helper for each socket end the daemon sends it. The daemon's part of a spawn is a
// socket pair and one message, some tens of microseconds; a fork of the daemon itself
// (two, so that nothing has to reap the helper) cost about a millisecond of the loop's
// time at 16 PFs, and more as its memory grew. When the spawner is gone, the daemon
// forks its helpers itself (DeviceCalls).
namespace vfready::host::helper {

// Starts the spawner, detached. Answers our end of its socket, or -1 with *err set.
int start_spawner(int* err);
// Asks the spawner for helper `serial`. Answers our end of the helper's socket (usable at
// once: a request waits in it until the helper reads it), or -1 with errno set: the
// spawner is gone (EPIPE, ECONNRESET) or behind (EAGAIN). Never waits.
int spawn_through(int spawner, uint32_t serial);
// What the spawner says of each helper it forked, in the order asked.
struct Spawned {
  uint32_t serial = 0;
  int32_t pid = 0;  // its process; -1 when the fork failed
};
// The next of those waiting in the spawner's socket; false when none is. Never waits.
bool take_spawned(int spawner, Spawned* told);

}  // namespace vfready::host::helper
