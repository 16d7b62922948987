// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <fstream>
#include <string>

#include "fake_host.hpp"
#include "process.hpp"

// Running the real vfreadyd against a fake host, inside its namespace.
namespace vfready::testing {

inline std::string repo_config() { return VFREADY_SOURCE_DIR "/config/vfready.json"; }

// The command line: `ip netns exec` into the fake host's namespace, every root
// pointed at it, the repository's compatibility table.
inline std::string vfreadyd_command(const FakeHost& host, const std::string& config,
                                    const std::string& args = "--once",
                                    const std::string& notify_socket = "") {
  return (notify_socket.empty() ? std::string() : "NOTIFY_SOCKET=" + notify_socket + " ") +
         "ip netns exec " + host.netns() + " " VFREADYD_PATH " --config " + config +
         " --sysfs-root " + host.root() + "/sys --proc-root " + host.root() +
         "/proc --kernel-log " + host.root() + "/dev/kmsg --udev-run-dir " + host.root() +
         "/run/udev --compat " VFREADY_SOURCE_DIR "/config/compatibility.json " + args;
}

// Writes a config file into the fake host's root and returns its path.
inline std::string write_config(const FakeHost& host, const std::string& json,
                                const std::string& name = "vfready.json") {
  const auto dir = host.root() + "/etc";
  sh("mkdir -p " + dir);
  const auto path = dir + "/" + name;
  std::ofstream(path) << json;
  return path;
}

}  // namespace vfready::testing
