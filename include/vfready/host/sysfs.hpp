// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vfready/model/result.hpp"

// sysfs, rooted at a configurable directory (/sys, or a fake host's). Paths are
// relative to the root. Writes return the errno the kernel gave, so callers can tell
// EBUSY from ERANGE; they may block (sriov_numvfs does): never call them on the
// event loop thread. Calls may come from several threads at once (read_host does).
namespace vfready::host {

// Where a write runs: in the calling thread, or in a child process that alone takes the
// risk of waiting in the kernel forever (a driver that never returns).
enum class WriteIn { kThisThread, kChild };

class Sysfs {
 public:
  virtual ~Sysfs() = default;
  // The attribute's value without its trailing newline.
  virtual Result<std::string> read(const std::string& rel) = 0;
  // 0, or the errno of the write.
  virtual int write(const std::string& rel, std::string_view value,
                    WriteIn where = WriteIn::kThisThread) = 0;
  virtual bool exists(const std::string& rel) = 0;
  // Entries of a directory, sorted; empty when absent.
  virtual std::vector<std::string> list(const std::string& rel) = 0;
  // The last component of a symlink's target ("mlx5_core" for driver ->), if a link.
  virtual std::optional<std::string> link_target_name(const std::string& rel) = 0;
};

class RootedSysfs final : public Sysfs {
 public:
  explicit RootedSysfs(std::string root) : root_(std::move(root)) {}
  Result<std::string> read(const std::string& rel) override;
  int write(const std::string& rel, std::string_view value, WriteIn where) override;
  bool exists(const std::string& rel) override;
  std::vector<std::string> list(const std::string& rel) override;
  std::optional<std::string> link_target_name(const std::string& rel) override;
  [[nodiscard]] const std::string& root() const { return root_; }

 private:
  [[nodiscard]] std::string path(const std::string& rel) const { return root_ + "/" + rel; }
  std::string root_;
};

// errno as text ("Device or resource busy (EBUSY)"), thread-safe.
std::string errno_name(int err);

}  // namespace vfready::host
