// SPDX-License-Identifier: Apache-2.0
// udev-events: what libudev sees on the host it runs on, through vfready's own udev
// adapter. Run on the fake host (vfready-fakehost exec) to check that it plays udevd:
//   udev-events initialized IFINDEX             prints 1 or 0
//   udev-events listen COUNT TIMEOUT_MS READY   touches READY once listening, then prints
//                                               "ACTION IFINDEX NAME" per netdev event;
//                                               exit 0 after COUNT events, 1 at timeout
#include <poll.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "vfready/host/udev.hpp"

namespace {

int listen(int count, int timeout_ms, const std::string& ready) {
  vfready::host::UdevMonitor monitor;
  std::ofstream(ready).flush();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (count > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{monitor.fd(), POLLIN, 0};
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) {
      return 1;
    }
    bool overflowed = false;
    for (const auto& e : monitor.drain(&overflowed)) {
      std::printf("%s %d %s\n", e.action.c_str(), e.ifindex, e.name.c_str());
      --count;
    }
    static_cast<void>(std::fflush(stdout));
  }
  return 0;
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
    if (verb == "listen" && argc == 5) {
      return listen(std::stoi(argv[2]), std::stoi(argv[3]), argv[4]);
    }
  } catch (const std::exception& e) {
    static_cast<void>(std::fprintf(stderr, "udev-events: %s\n", e.what()));
    return 2;
  }
  static_cast<void>(std::fprintf(stderr,
                                 "usage: udev-events initialized IFINDEX | listen COUNT "
                                 "TIMEOUT_MS READY_FILE\n"));
  return 2;
}
