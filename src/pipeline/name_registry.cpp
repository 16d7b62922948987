// SPDX-License-Identifier: Apache-2.0
#include "vfready/pipeline/name_registry.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

namespace vfready::pipeline {

NameRegistry::NameRegistry(std::set<std::string> pfs)
    : turn_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)), pfs_(std::move(pfs)) {}

NameRegistry::~NameRegistry() {
  if (turn_fd_ >= 0) {
    ::close(turn_fd_);
  }
}

bool NameRegistry::take_turn() {
  std::lock_guard lock(turn_mu_);
  if (turn_taken_) {
    return false;
  }
  turn_taken_ = true;
  uint64_t ended = 0;  // the ends heard so far: the next wakes those that wait again
  static_cast<void>(::read(turn_fd_, &ended, sizeof ended));
  return true;
}

bool NameRegistry::turn_free() {
  std::lock_guard lock(turn_mu_);
  return !turn_taken_;
}

void NameRegistry::end_turn() {
  std::lock_guard lock(turn_mu_);
  turn_taken_ = false;
  const uint64_t one = 1;
  static_cast<void>(::write(turn_fd_, &one, sizeof one));
}

}  // namespace vfready::pipeline
