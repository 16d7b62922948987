// SPDX-License-Identifier: Apache-2.0
#include "private_bus.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "process.hpp"

namespace vfready::testing {

namespace {

// Debian's system.conf default policy, without activation or limits.
constexpr const char* kSystemPolicy = R"(
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Properties"/>
  </policy>
  <include>)" VFREADY_SOURCE_DIR R"(/systemd/org.vfready.vfready1.conf</include>
)";

constexpr const char* kOpenPolicy = R"(
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
  </policy>
)";

}  // namespace

PrivateBus::PrivateBus(Policy policy) {
  char tmpl[] = "/tmp/vfready-bus-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    throw std::runtime_error("mkdtemp failed");
  }
  dir_ = tmpl;
  chmod(dir_.c_str(), 0755);  // nobody reaches the socket too
  const auto config = dir_ + "/bus.conf";
  std::ofstream(config)
      << "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
         " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n<busconfig>\n"
      << "  <listen>unix:path=" << dir_ << "/socket</listen>\n  <auth>EXTERNAL</auth>\n"
      << (policy == Policy::kShipped ? kSystemPolicy : kOpenPolicy) << "</busconfig>\n";
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe failed");
  }
  pid_ = fork();
  if (pid_ == 0) {
    dup2(out[1], 3);
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2);  // it complains about fd limits it may not raise here
    execlp("dbus-daemon", "dbus-daemon", ("--config-file=" + config).c_str(), "--nofork",
           "--print-address=3", nullptr);
    _exit(127);
  }
  close(out[1]);
  // The address line is the event that it listens.
  pollfd p{out[0], POLLIN, 0};
  char buf[512] = {};
  ssize_t n = 0;
  if (poll(&p, 1, 10000) == 1) {
    n = read(out[0], buf, sizeof buf - 1);
  }
  close(out[0]);
  if (n <= 0) {
    throw std::runtime_error("dbus-daemon did not print its address within 10 s");
  }
  address_ = std::string(buf, static_cast<std::size_t>(n));
  while (!address_.empty() && (address_.back() == '\n' || address_.back() == ' ')) {
    address_.pop_back();
  }
}

PrivateBus::~PrivateBus() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    if (!wait_for_exit(pid_, std::chrono::seconds(10))) {
      kill(pid_, SIGKILL);
    }
    waitpid(pid_, nullptr, 0);
  }
  sh("rm -rf " + dir_);
}

std::string as_nobody(const std::string& command) {
  return "setpriv --reuid=65534 --regid=65534 --clear-groups " + command;
}

}  // namespace vfready::testing
