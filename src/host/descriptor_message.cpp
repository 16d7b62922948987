// SPDX-License-Identifier: Apache-2.0
#include "descriptor_message.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace vfready::host {

namespace {

// A message of one buffer, with room for one descriptor.
struct Message {
  Message(const void* data, std::size_t size) : iov{const_cast<void*>(data), size} {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
  Message(const Message&) = delete;
  Message& operator=(const Message&) = delete;
  iovec iov;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
};

}  // namespace

ssize_t send_with_descriptor(int socket, const void* data, std::size_t size, int fd, int flags) {
  Message m(data, size);
  if (fd >= 0) {
    cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  } else {
    m.msg.msg_control = nullptr;
    m.msg.msg_controllen = 0;
  }
  ssize_t n = 0;
  do {
    n = ::sendmsg(socket, &m.msg, flags);
  } while (n < 0 && errno == EINTR);
  return n;
}

ReceivedMessage receive_with_descriptor(int socket, void* data, std::size_t size, int flags) {
  Message m(data, size);
  ReceivedMessage got;
  do {
    got.size = ::recvmsg(socket, &m.msg, flags | MSG_CMSG_CLOEXEC);
  } while (got.size < 0 && errno == EINTR);
  if (got.size < 0) {
    return got;
  }
  got.lost = (m.msg.msg_flags & MSG_CTRUNC) != 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&m.msg); c != nullptr; c = CMSG_NXTHDR(&m.msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
      continue;
    }
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (got.fd < 0) {
        got.fd = fd;
      } else {
        ::close(fd);  // one to a message: another is not ours to keep
        got.more = true;
      }
    }
  }
  return got;
}

}  // namespace vfready::host
