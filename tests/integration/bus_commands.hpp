// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "private_bus.hpp"
#include "service_daemon.hpp"

// Commands against vfreadyd on a private bus, for the integration tests.
namespace vfready::testing {

inline std::string busctl(const PrivateBus& bus, const std::string& args) {
  return "busctl --address=" + bus.address() + " " + args;
}

inline std::string manager(const std::string& verb, const std::string& rest) {
  return verb + " org.vfready.vfready1 /org/vfready/vfready1 org.vfready.vfready1.Manager " + rest;
}

// The Manager's State property as busctl prints it ("s \"ready\"").
inline std::string state(const PrivateBus& bus) {
  return trimmed(sh(busctl(bus, manager("get-property", "State"))).out);
}

inline std::string vfreadyctl(const PrivateBus& bus, const std::string& args) {
  return VFREADYCTL_PATH " --bus-address " + bus.address() + " " + args;
}

// vfreadyd has said READY=1 and owns its name on the bus.
inline ::testing::AssertionResult serving(ServiceDaemon& daemon, PrivateBus& bus) {
  if (!daemon.notify().wait_for("READY=1", std::chrono::seconds(60))) {
    return ::testing::AssertionFailure() << "no READY=1: " << daemon.log();
  }
  if (!bus.wait_for_owner("org.vfready.vfready1")) {
    return ::testing::AssertionFailure() << "not on the bus: " << daemon.log();
  }
  return ::testing::AssertionSuccess();
}

}  // namespace vfready::testing
