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

std::optional<uint64_t> NameRegistry::take_turn(const std::string& owner) {
  std::lock_guard lock(turn_mu_);
  if (turn_) {
    return std::nullopt;
  }
  turn_ = next_token_++;
  turn_owner_ = owner;
  uint64_t ended = 0;  // the ends heard so far: the next wakes those that wait again
  static_cast<void>(::read(turn_fd_, &ended, sizeof ended));
  return turn_;
}

bool NameRegistry::turn_free() {
  std::lock_guard lock(turn_mu_);
  return !turn_;
}

void NameRegistry::end_turn(uint64_t token) {
  std::lock_guard lock(turn_mu_);
  if (turn_ == token) {
    free_turn();
  }
}

void NameRegistry::revoke(const std::string& owner) {
  std::lock_guard lock(turn_mu_);
  if (turn_ && turn_owner_ == owner) {
    free_turn();
  }
}

void NameRegistry::free_turn() {
  turn_.reset();
  turn_owner_.clear();
  const uint64_t one = 1;
  static_cast<void>(::write(turn_fd_, &one, sizeof one));
}

}  // namespace vfready::pipeline
