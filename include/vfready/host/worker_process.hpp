// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

// A worker process of the daemon's: a fork, detached (nothing has to reap it), that does
// one piece of work which may wait on the kernel (the host's read), and tells the daemon
// what it found in records over a SOCK_SEQPACKET socket, each of a kind, bytes of any
// length, and at most one descriptor (SCM_RIGHTS). The daemon's loop reads them as they
// come, never waiting.
namespace vfready::host {

// Forks the worker, which runs `work` on its end of the socket (every other descriptor
// of the caller's closed but stdio, and those `work` opens; named `name` in ps), then
// exits. Our end, or -1 with *err set.
int fork_worker(int* err, const char* name, std::function<void(int socket)> work);

// In the worker: one record, in as many messages as it takes (32 KiB of bytes each); `fd`
// (>= 0) goes with it. False when the daemon is gone (its end closed). Threads may send
// at once only records of one message: the messages of two longer ones would interleave
// (the reader then ends, as on what is not a message of ours).
bool send_record(int socket, char kind, std::string_view bytes, int fd = -1);

struct Record {
  char kind = 0;
  std::string bytes;
  int fd = -1;  // taken: the receiver closes it
};

// In the daemon: the records that have come whole on `socket`, as they come.
class RecordReader {
 public:
  RecordReader() = default;
  ~RecordReader();
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;
  // Every record now whole, reading what is waiting (never waits).
  std::vector<Record> read(int socket);
  // The worker has ended (its end closed): no record comes after those read.
  [[nodiscard]] bool ended() const { return ended_; }
  // A descriptor the worker sent could not be taken (MSG_CTRUNC: ours at their limit):
  // the records it came with lack it.
  [[nodiscard]] bool lost_a_descriptor() const { return lost_; }
  // Messages read so far, whole records or not: the worker going on.
  [[nodiscard]] std::size_t messages() const { return messages_; }

 private:
  Record partial_;
  bool ended_ = false;
  bool lost_ = false;
  std::size_t messages_ = 0;
};

}  // namespace vfready::host
