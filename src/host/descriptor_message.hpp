// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <sys/types.h>

#include <cstddef>

// One message on a Unix socket with at most one descriptor beside its bytes (SCM_RIGHTS):
// how the daemon hands a helper's socket to the spawner, and a worker its calls left
// behind to the daemon.
namespace vfready::host {

// Sends `size` bytes at `data` in one message, with `fd` (when >= 0) beside them.
// sendmsg's answer, EINTR retried.
ssize_t send_with_descriptor(int socket, const void* data, std::size_t size, int fd, int flags);

struct ReceivedMessage {
  ssize_t size = 0;   // recvmsg's answer
  int fd = -1;        // the first descriptor that came (close-on-exec), any other closed
  bool lost = false;  // MSG_CTRUNC: a descriptor sent did not fit (ours at their limit)
  bool more = false;  // more than one descriptor came (all but `fd` closed)
};
// One message into `data` (at most `size` bytes), EINTR retried.
ReceivedMessage receive_with_descriptor(int socket, void* data, std::size_t size, int flags);

}  // namespace vfready::host
