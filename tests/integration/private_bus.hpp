// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <sys/types.h>

#include <string>

// A dbus-daemon of the test's own, on a socket in a temporary directory.
namespace vfready::testing {

class PrivateBus {
 public:
  enum class Policy {
    kShipped,  // the system bus's default policy plus vfready's shipped policy file
    kOpen,     // everyone may do everything: only vfreadyd's own checks stand
  };
  explicit PrivateBus(Policy policy);
  ~PrivateBus();
  PrivateBus(const PrivateBus&) = delete;
  PrivateBus& operator=(const PrivateBus&) = delete;

  [[nodiscard]] const std::string& address() const { return address_; }

 private:
  std::string dir_;
  std::string address_;
  pid_t pid_ = -1;
};

// `command` run as the unprivileged user nobody (for bus clients).
std::string as_nobody(const std::string& command);

}  // namespace vfready::testing
