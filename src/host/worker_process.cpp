// SPDX-License-Identifier: Apache-2.0
#include "vfready/host/worker_process.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "descriptor_message.hpp"
#include "device_call_helper.hpp"

namespace vfready::host {

namespace {

constexpr int kSocket = 3;  // where helper::keep_only puts it
// A message: the record's kind, 1 on its last message, then up to kChunk of its bytes.
constexpr std::size_t kHeader = 2;
constexpr std::size_t kChunk = std::size_t{32} * 1024;

}  // namespace

int fork_worker(int* err, const char* name, std::function<void(int socket)> work) {
  int pid = 0;
  const int fd = helper::fork_detached(
      err,
      [name, &work](int socket) {
        helper::keep_only(socket, name);
        // Not before the go: the first message on the socket is the worker's pid, sent
        // by the process that forked it (helper::fork_detached), which the caller takes.
        char go = 0;
        if (::recv(kSocket, &go, 1, 0) == 1) {
          work(kSocket);
        }
        ::_exit(0);  // no destructor of the daemon's objects runs here
      },
      &pid);
  if (fd >= 0 && ::send(fd, "g", 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1) {
    *err = errno;
    ::close(fd);
    return -1;
  }
  return fd;
}

bool send_record(int socket, char kind, std::string_view bytes, int fd) {
  std::string message;
  std::size_t at = 0;
  do {
    const auto size = std::min(kChunk, bytes.size() - at);
    message.assign({kind, static_cast<char>(at + size == bytes.size() ? 1 : 0)});
    message.append(bytes.substr(at, size));
    const ssize_t n = send_with_descriptor(socket, message.data(), message.size(),
                                           at == 0 ? fd : -1, MSG_NOSIGNAL);
    if (n != static_cast<ssize_t>(message.size())) {
      return false;
    }
    at += size;
  } while (at < bytes.size());
  return true;
}

RecordReader::~RecordReader() {
  if (partial_.fd >= 0) {
    ::close(partial_.fd);
  }
}

std::vector<Record> RecordReader::read(int socket) {
  std::vector<Record> whole;
  std::string buffer(kHeader + kChunk, '\0');
  while (!ended_) {
    const auto got = receive_with_descriptor(socket, buffer.data(), buffer.size(), MSG_DONTWAIT);
    if (got.size < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      break;
    }
    // A record's next message is of its kind: another is not a message of ours.
    const bool interleaved = got.size >= static_cast<ssize_t>(kHeader) && partial_.kind != 0 &&
                             buffer[0] != partial_.kind;
    if (got.size < static_cast<ssize_t>(kHeader) || interleaved) {
      if (got.fd >= 0) {
        ::close(got.fd);
      }
      ended_ = true;  // its end closed (0), the socket failed, or not a message of ours
      break;
    }
    ++messages_;
    lost_ = lost_ || got.lost;  // a descriptor it sent is gone: not its answer
    if (got.fd >= 0 && partial_.fd >= 0) {
      ::close(got.fd);  // one to a record: another is not ours to keep
    } else if (got.fd >= 0) {
      partial_.fd = got.fd;
    }
    partial_.kind = buffer[0];
    partial_.bytes.append(buffer.data() + kHeader, static_cast<std::size_t>(got.size) - kHeader);
    if (buffer[1] == 1) {
      whole.push_back(std::move(partial_));
      partial_ = Record{};
    }
  }
  return whole;
}

}  // namespace vfready::host
