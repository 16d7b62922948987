// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

// A named network namespace, as `ip netns add` makes one: a bind mount of the
// namespace at /run/netns/NAME, so that `ip -n NAME` and `ip netns exec` find it.
namespace vfready::fakehost {

class NamedNetns {
 public:
  // Creates the namespace; throws std::runtime_error when NAME is taken by a live
  // owner. A namespace left by a fake host that died (its owner file names a dead
  // pid) is reclaimed first.
  explicit NamedNetns(std::string name);
  ~NamedNetns();
  NamedNetns(const NamedNetns&) = delete;
  NamedNetns& operator=(const NamedNetns&) = delete;

  [[nodiscard]] const std::string& name() const { return name_; }
  // An fd referring to the namespace (for setns); owned by this object.
  [[nodiscard]] int fd() const { return fd_; }

  // Unmounts and removes /run/netns/NAME. Idempotent.
  void remove();

  static std::string path_of(const std::string& name);

 private:
  std::string name_;
  int fd_ = -1;
};

}  // namespace vfready::fakehost
