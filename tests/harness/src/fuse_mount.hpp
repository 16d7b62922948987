// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "tree.hpp"

struct fuse_session;

// Serves a Tree as a filesystem at a mount point through FUSE, so that processes see
// sysfs semantics: true errnos from writes, writes that block, no caching. The only
// file of the fake host that includes libfuse3.
namespace vfready::fakehost {

class FuseMount {
 public:
  FuseMount(const Tree& tree, std::string mountpoint);
  ~FuseMount();
  FuseMount(const FuseMount&) = delete;
  FuseMount& operator=(const FuseMount&) = delete;

  // Mounts and starts serving on worker threads; throws std::runtime_error on failure.
  void start();
  // Unmounts and waits for the workers. Idempotent.
  void stop();

  // Detaches a mount left behind by a fake host that died (a dead FUSE mount answers
  // ENOTCONN). True when one was there.
  static bool clear_stale(const std::string& mountpoint);

  // For the request handlers: the tree, and the inode number of each path the kernel
  // has seen (one per path, kept for the life of the mount, as sysfs keeps its nodes).
  [[nodiscard]] const Tree& tree() const { return tree_; }
  uint64_t ino_of(const std::string& path);
  [[nodiscard]] std::optional<std::string> path_of(uint64_t ino) const;

 private:
  static int connection_of(const std::string& mountpoint);
  static void abort_connection(int connection);

  const Tree& tree_;
  std::string mountpoint_;
  struct fuse_session* session_ = nullptr;
  mutable std::mutex inodes_mu_;
  std::unordered_map<std::string, uint64_t> inos_;
  std::vector<std::string> paths_;  // index: inode number - 1
  int connection_ = -1;
  std::thread loop_;
};

}  // namespace vfready::fakehost
