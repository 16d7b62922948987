// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "tree.hpp"

struct fuse;

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

 private:
  static int connection_of(const std::string& mountpoint);
  static void abort_connection(int connection);

  const Tree& tree_;
  std::string mountpoint_;
  struct fuse* fuse_ = nullptr;
  int connection_ = -1;
  std::thread loop_;
};

}  // namespace vfready::fakehost
