// SPDX-License-Identifier: Apache-2.0
#include "helper_spawner.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include "descriptor_message.hpp"
#include "device_call_helper.hpp"

namespace vfready::host::helper {

namespace {

constexpr int kSpawnerSocket = 3;  // as a helper's (keep_only)

// One descriptor out of a message on `socket`, with its serial: -1 when the message
// carries none (or it was lost); -2 when the daemon has closed its end (or the socket
// failed).
int receive_descriptor(int socket, uint32_t* serial) {
  const auto got = receive_with_descriptor(socket, serial, sizeof *serial, 0);
  if (got.size <= 0) {
    if (got.fd >= 0) {
      ::close(got.fd);
    }
    return -2;
  }
  if (got.fd >= 0 && (got.lost || got.more)) {
    ::close(got.fd);  // not the one descriptor the daemon sends: none is taken
    return -1;
  }
  return got.fd;
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
  const ssize_t n =
      send_with_descriptor(spawner, &serial, sizeof serial, sv[1], MSG_DONTWAIT | MSG_NOSIGNAL);
  const int saved = errno;
  ::close(sv[1]);  // in flight to the spawner, which holds it now
  if (n != sizeof serial) {
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
