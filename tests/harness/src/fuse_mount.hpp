// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <atomic>
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
  // The requests the kernel sends, counted by kind: what a sysfs client costs here.
  enum class Request : std::uint8_t {
    kLookup,
    kForget,
    kGetattr,
    kSetattr,
    kReadlink,
    kOpendir,
    kReaddir,
    kReleasedir,
    kOpen,
    kRead,
    kWrite,
    kFlush,
    kRelease,
    kAccess,
    kCount
  };
  static constexpr std::array<const char*, static_cast<std::size_t>(Request::kCount)>
      kRequestNames = {"lookup",  "forget",  "getattr",    "setattr", "readlink",
                       "opendir", "readdir", "releasedir", "open",    "read",
                       "write",   "flush",   "release",    "access"};

  FuseMount(const Tree& tree, std::string mountpoint);
  ~FuseMount();
  FuseMount(const FuseMount&) = delete;
  FuseMount& operator=(const FuseMount&) = delete;

  // Mounts and starts serving on worker threads; throws std::runtime_error on failure.
  void start();
  // Unmounts and waits for the workers. Idempotent.
  void stop();

  // Has the kernel drop what it cached of these symlinks (their targets): they went away
  // or point elsewhere. Returns when it has. Not from a request handler of theirs.
  void forget_links(const std::vector<std::string>& paths);

  // Detaches a mount left behind by a fake host that died (a dead FUSE mount answers
  // ENOTCONN). True when one was there.
  static bool clear_stale(const std::string& mountpoint);

  // For the request handlers: the tree, and the inode number of each path the kernel
  // has seen (one per path, kept for the life of the mount, as sysfs keeps its nodes).
  [[nodiscard]] const Tree& tree() const { return tree_; }
  uint64_t ino_of(const std::string& path);
  [[nodiscard]] std::optional<std::string> path_of(uint64_t ino) const;
  void count(Request r) {
    requests_[static_cast<std::size_t>(r)].fetch_add(1, std::memory_order_relaxed);
  }
  // "lookup 12\ngetattr 40\n...": every kind, in the order above, since the mount.
  [[nodiscard]] std::string request_counts() const;

 private:
  static int connection_of(const std::string& mountpoint);
  static void abort_connection(int connection);

  const Tree& tree_;
  std::string mountpoint_;
  struct fuse_session* session_ = nullptr;
  mutable std::mutex inodes_mu_;
  std::unordered_map<std::string, uint64_t> inos_;
  std::vector<std::string> paths_;  // index: inode number - 1
  std::array<std::atomic<uint64_t>, static_cast<std::size_t>(Request::kCount)> requests_{};
  std::mutex notify_mu_;   // forget_links() against stop()
  bool stopping_ = false;  // guarded by notify_mu_
  int connection_ = -1;
  std::thread loop_;
};

}  // namespace vfready::fakehost
