// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>

// The fake host's records, as plain files under its root:
//  - dev/kmsg: the kernel log, one record a line in /dev/kmsg's format
//    ("<level>,<seq>,<usec>,-;<message>");
//  - writes.log: every write the fake sysfs received, "<path> <value> <errno>", the
//    path relative to the root and the value with whitespace escaped (\n, \x20);
//  - probes.log: every VF probe, "<vf pci> <effective port GUID>";
//  - renames.log: every rename of a PF or VF netdev, "<ifindex> <old> <new>".
namespace vfready::fakehost {

class HostLogs {
 public:
  explicit HostLogs(const std::string& root);
  ~HostLogs();
  HostLogs(const HostLogs&) = delete;
  HostLogs& operator=(const HostLogs&) = delete;

  void write(const std::string& relpath, std::string_view value, int err);
  void probe(const std::string& vf_pci, const std::string& guid);
  void rename(int ifindex, const std::string& from, const std::string& to);
  // level: 3 error, 4 warning, 6 info (as printk).
  void kmsg(int level, const std::string& message);
  // A hang fault has begun (hangs.log, a line each): for tests to know a call is in it.
  void hang();

  // How a written value appears in writes.log.
  static std::string escape(std::string_view value);

 private:
  std::mutex mu_;
  FILE* writes_ = nullptr;
  FILE* probes_ = nullptr;
  FILE* renames_ = nullptr;
  FILE* kmsg_ = nullptr;
  FILE* hangs_ = nullptr;
  uint64_t seq_ = 0;
};

}  // namespace vfready::fakehost
