// SPDX-License-Identifier: Apache-2.0
#include "vfready/host/worker_process.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

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
    iovec iov{message.data(), message.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    if (fd >= 0 && at == 0) {
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    ssize_t n = 0;
    do {
      n = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
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
    iovec iov{buffer.data(), buffer.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(socket, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      break;
    }
    if (n < static_cast<ssize_t>(kHeader)) {
      ended_ = true;  // its end closed (0), the socket failed, or not a message of ours
      break;
    }
    if ((msg.msg_flags & MSG_CTRUNC) != 0) {
      lost_ = true;  // a descriptor it sent is gone (ours at their limit): not its answer
    }
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        int fd = -1;
        std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
        if (partial_.fd >= 0) {
          ::close(fd);  // one to a record: another is not ours to keep
        } else {
          partial_.fd = fd;
        }
      }
    }
    partial_.kind = buffer[0];
    partial_.bytes.append(buffer.data() + kHeader, static_cast<std::size_t>(n) - kHeader);
    if (buffer[1] == 1) {
      whole.push_back(std::move(partial_));
      partial_ = Record{};
    }
  }
  return whole;
}

}  // namespace vfready::host
