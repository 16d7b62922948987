// SPDX-License-Identifier: Apache-2.0
#include "host_exec.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <string_view>

#include "errno_text.hpp"

namespace vfready::fakehost {

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what + ": " + errno_text(errno));
}

void bind(const std::string& from, const std::string& to) {
  if (mount(from.c_str(), to.c_str(), nullptr, MS_BIND, nullptr) != 0) {
    fail("cannot bind " + from + " over " + to);
  }
}

}  // namespace

void exec_in_host(const std::string& root, const std::string& netns,
                  const std::vector<std::string>& command, const std::string& stamp) {
  if (command.empty()) {
    throw std::runtime_error("no command to run");
  }
  const auto ns_path = "/run/netns/" + netns;
  const int ns = open(ns_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (ns < 0) {
    fail("cannot open " + ns_path + " (is the fake host running?)");
  }
  if (setns(ns, CLONE_NEWNET) != 0) {
    fail("cannot enter the network namespace " + netns);
  }
  close(ns);
  // A mount namespace of its own, whose mounts never reach the host's.
  if (unshare(CLONE_NEWNS) != 0) {
    fail("cannot make a mount namespace");
  }
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    fail("cannot make / private");
  }
  bind(root + "/sys", "/sys");
  bind(root + "/run", "/run");
  bind(root + "/dev/kmsg", "/dev/kmsg");
  bind(root + "/proc/sys/kernel/osrelease", "/proc/sys/kernel/osrelease");
  std::vector<char*> argv;
  argv.reserve(command.size() + 1);
  for (const auto& arg : command) {
    argv.push_back(const_cast<char*>(arg.c_str()));  // NOLINT: execvp's signature
  }
  argv.push_back(nullptr);
  // libudev refuses a device whose directory is not on sysfs (this one is on FUSE)
  // unless told not to check: systemd's own switch for tests.
  std::string verify = "SYSTEMD_DEVICE_VERIFY_SYSFS=0";
  std::vector<char*> env = {verify.data()};
  for (char** e = environ; *e != nullptr; ++e) {  // NOLINT: walking the environment
    if (!std::string_view(*e).starts_with("SYSTEMD_DEVICE_VERIFY_SYSFS=")) {
      env.push_back(*e);
    }
  }
  env.push_back(nullptr);
  if (!stamp.empty()) {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    std::ofstream out(stamp);
    out << static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec << '\n';
    out.close();
    if (!out) {
      fail("cannot write the time of the exec to " + stamp);
    }
  }
  execvpe(argv[0], argv.data(), env.data());
  fail("cannot run " + command.front());
}

}  // namespace vfready::fakehost
