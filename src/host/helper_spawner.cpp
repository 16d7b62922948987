// SPDX-License-Identifier: Apache-2.0
#include "helper_spawner.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "device_call_helper.hpp"

namespace vfready::host::helper {

namespace {

constexpr int kSpawnerSocket = 3;  // as a helper's (keep_only)

// A message of the helper's serial with room for one descriptor (SCM_RIGHTS): what the
// daemon sends the spawner for each helper.
struct DescriptorMessage {
  DescriptorMessage() {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
  DescriptorMessage(const DescriptorMessage&) = delete;
  DescriptorMessage& operator=(const DescriptorMessage&) = delete;
  uint32_t serial = 0;
  iovec iov{&serial, sizeof serial};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
};

// One descriptor out of a message on `socket`, with its serial: -1 when the message
// carries none; -2 when the daemon has closed its end (or the socket failed).
int receive_descriptor(int socket, uint32_t* serial) {
  DescriptorMessage m;
  ssize_t n = 0;
  do {
    n = ::recvmsg(socket, &m.msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) {
    return -2;
  }
  *serial = m.serial;
  // One descriptor, or none taken: any that came with a message of another shape are
  // closed (only the daemon has the other end, but nothing it did not mean is kept).
  int fd = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&m.msg); c != nullptr; c = CMSG_NXTHDR(&m.msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
      continue;
    }
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int got = -1;
      std::memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof got);
      if (fd < 0 && count == 1) {
        fd = got;
      } else {
        ::close(got);
      }
    }
  }
  if (fd >= 0 && (m.msg.msg_flags & MSG_CTRUNC) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The spawner: for each socket end the daemon sends, a helper on it, forked once. Its
// helpers are its children, reaped by the kernel as they exit (SIGCHLD ignored: no
// zombies, nothing to wait for), where a second fork to leave them nobody's child cost
// the spawner half a millisecond more a helper, in line ahead of every other PF's at the
// start of a pass. When a fork fails, the end is closed without a helper: the daemon's
// call on it finds its peer gone (EPIPE), never a call that waits for nothing. Like a
// helper, it makes only system calls.
[[noreturn]] void serve_spawns() {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGCHLD, &ignore, nullptr);
  while (true) {
    Spawned told{};
    const int end = receive_descriptor(kSpawnerSocket, &told.serial);
    if (end == -2) {
      ::_exit(0);  // the daemon closed its end (exited, or forks its helpers itself)
    }
    if (end < 0) {
      continue;
    }
    told.pid = ::fork();
    if (told.pid == 0) {
      struct sigaction by_default {};
      by_default.sa_handler = SIG_DFL;
      ::sigaction(SIGCHLD, &by_default, nullptr);  // as every other process has it
      become_helper(end);  // takes fd 3 over: the helper holds none of the spawner's
    }
    ::close(end);
    // Who the helper is, for the daemon to name it should its call not return. Never
    // waits: a daemon that reads none of these loses the ones past its socket's room.
    static_cast<void>(::send(kSpawnerSocket, &told, sizeof told, MSG_DONTWAIT | MSG_NOSIGNAL));
  }
}

[[noreturn]] void become_spawner(int socket) {
  keep_only(socket, "vfready-spawn");
  serve_spawns();
}

}  // namespace

int start_spawner(int* err) {
  int pid = 0;
  return fork_detached(err, become_spawner, &pid);
}

int spawn_through(int spawner, uint32_t serial) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    return -1;
  }
  DescriptorMessage m;
  m.serial = serial;
  cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &sv[1], sizeof(int));
  ssize_t n = 0;
  do {
    n = ::sendmsg(spawner, &m.msg, MSG_DONTWAIT | MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  const int saved = errno;
  ::close(sv[1]);  // in flight to the spawner, which holds it now
  if (n != sizeof m.serial) {
    ::close(sv[0]);
    errno = n < 0 ? saved : EPIPE;
    return -1;
  }
  return sv[0];
}

bool take_spawned(int spawner, Spawned* told) {
  return ::recv(spawner, told, sizeof *told, MSG_DONTWAIT) == sizeof *told;
}

}  // namespace vfready::host::helper
