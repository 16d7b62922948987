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
  if (turn_) {
    return false;
  }
  turn_ = true;
  uint64_t ended = 0;  // the ends heard so far: the next wakes those that wait again
  static_cast<void>(::read(turn_fd_, &ended, sizeof ended));
  return true;
}

void NameRegistry::end_turn() {
  turn_ = false;
  const uint64_t one = 1;
  static_cast<void>(::write(turn_fd_, &one, sizeof one));
}

}  // namespace vfready::pipeline
