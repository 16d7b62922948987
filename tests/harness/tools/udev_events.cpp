// SPDX-License-Identifier: Apache-2.0
// udev-events: what libudev sees on the host it runs on, through vfready's own udev
// adapter. Run on the fake host (vfready-fakehost exec) to check that it plays udevd:
//   udev-events initialized IFINDEX             prints 1 or 0
//   udev-events listen COUNT TIMEOUT_MS READY   writes its socket's port id to READY
//                                               once listening, then prints
//                                               "ACTION IFINDEX NAME" per netdev event
//                                               and "lost" where events were lost;
//                                               exit 0 after COUNT lines, 1 at timeout
//   udev-events send FROM ACTION IFINDEX DEVPATH [PAD]
//                                               sends udevd's message of a netdev event
//                                               to monitors, FROM "root" (as udevd does),
//                                               "uid:N" (root's, claiming another uid) or
//                                               "unicast:PORT" (to one socket); PAD: that
//                                               many bytes more in a property
//   udev-events flood COUNT                     sends COUNT of udevd's "change" messages
//                                               of a netdev that is not there, as root:
//                                               more than a monitor that is not read
//                                               can hold
#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>

#include "errno_text.hpp"
#include "udev_messages.hpp"
#include "vfready/host/udev.hpp"

namespace {

int listen(int count, int timeout_ms, const std::string& ready) {
  vfready::host::UdevMonitor monitor;
  sockaddr_nl self{};
  socklen_t len = sizeof self;
  getsockname(monitor.fd(), reinterpret_cast<sockaddr*>(&self), &len);  // NOLINT: sockaddr
  std::ofstream(ready + ".part") << self.nl_pid << "\n";
  static_cast<void>(std::rename((ready + ".part").c_str(), ready.c_str()));  // whole when there
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (count > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{monitor.fd(), POLLIN, 0};
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) {
      return 1;
    }
    bool overflowed = false;
    const auto events = monitor.drain(&overflowed);
    if (overflowed) {
      std::printf("lost\n");
      --count;
    }
    for (const auto& e : events) {
      std::printf("%s %d %s\n", e.action.c_str(), e.ifindex, e.name.c_str());
      --count;
    }
    static_cast<void>(std::fflush(stdout));
  }
  return 0;
}

// Sends one message as `from` says; throws what failed.
void send(const std::string& from, const std::string& action, const std::string& ifindex,
          const std::string& devpath, std::size_t pad) {
  const auto message =
      vfready::fakehost::udev_message("net", {{"ACTION", action},
                                              {"DEVPATH", devpath},
                                              {"SUBSYSTEM", "net"},
                                              {"SEQNUM", "1"},
                                              {"INTERFACE", devpath.substr(devpath.rfind('/') + 1)},
                                              {"IFINDEX", ifindex},
                                              {"PAD", std::string(pad, 'x')}});
  const int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
  sockaddr_nl to{};
  to.nl_family = AF_NETLINK;
  to.nl_groups = 2;                                              // udevd's group
  iovec iov{const_cast<char*>(message.data()), message.size()};  // NOLINT: sendmsg's type
  msghdr m{};
  m.msg_name = &to;
  m.msg_namelen = sizeof to;
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))] = {};
  if (from.starts_with("unicast:")) {
    to.nl_groups = 0;
    to.nl_pid = static_cast<uint32_t>(std::stoul(from.substr(8)));
  } else if (from.starts_with("uid:")) {
    // Root may claim any credentials (CAP_SETUID, scm_check_creds()); the receiver sees them.
    const auto uid = static_cast<uid_t>(std::stoul(from.substr(4)));
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_CREDENTIALS;
    c->cmsg_len = CMSG_LEN(sizeof(ucred));
    const ucred cred{getpid(), uid, uid};
    std::memcpy(CMSG_DATA(c), &cred, sizeof cred);
  } else if (from != "root") {
    throw std::invalid_argument("FROM is root, uid:N or unicast:PORT, not " + from);
  }
  if (fd < 0 || sendmsg(fd, &m, 0) < 0) {
    throw std::runtime_error("sending: " + vfready::fakehost::errno_text(errno));
  }
  close(fd);
}

// COUNT messages to udevd's group. Sent while a monitor is not read, they overrun its
// buffer (which the kernel counts as twice its SO_RCVBUF, data and overhead).
void flood(int count) {
  const auto message =
      vfready::fakehost::udev_message("net", {{"ACTION", "change"},
                                              {"DEVPATH", "/devices/virtual/net/flood0"},
                                              {"SUBSYSTEM", "net"},
                                              {"SEQNUM", "1"},
                                              {"INTERFACE", "flood0"},
                                              {"IFINDEX", "999999"}});
  const int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
  sockaddr_nl to{};
  to.nl_family = AF_NETLINK;
  to.nl_groups = 2;  // udevd's group
  for (int i = 0; i < count; ++i) {
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): sockaddr
    if (fd < 0 || sendto(fd, message.data(), message.size(), 0, reinterpret_cast<sockaddr*>(&to),
                         sizeof to) < 0) {
      throw std::runtime_error("flooding: " + vfready::fakehost::errno_text(errno));
    }
  }
  close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string verb = argc > 1 ? argv[1] : "";
    if (verb == "initialized" && argc == 3) {
      const vfready::host::UdevDevices devices;
      std::printf("%d\n", devices.initialized(std::stoi(argv[2])) ? 1 : 0);
      return 0;
    }
    if (verb == "flood" && argc == 3) {
      flood(std::stoi(argv[2]));
      return 0;
    }
    if (verb == "send" && (argc == 6 || argc == 7)) {
      send(argv[2], argv[3], argv[4], argv[5], argc == 7 ? std::stoul(argv[6]) : 0);
      return 0;
    }
    if (verb == "listen" && argc == 5) {
      return listen(std::stoi(argv[2]), std::stoi(argv[3]), argv[4]);
    }
  } catch (const std::exception& e) {
    static_cast<void>(std::fprintf(stderr, "udev-events: %s\n", e.what()));
    return 2;
  }
  static_cast<void>(std::fprintf(
      stderr,
      "usage: udev-events initialized IFINDEX | listen COUNT "
      "TIMEOUT_MS READY_FILE | send FROM ACTION IFINDEX DEVPATH [PAD] | flood COUNT\n"));
  return 2;
}
