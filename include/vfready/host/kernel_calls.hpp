// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>

// What this process has asked of the kernel through the host adapters, counted as the
// calls are made (device calls handed to helper processes count in the daemon, when
// handed over): the cost of a bring-up in operations, which unlike its time is the same
// on every machine.
namespace vfready::host {

struct KernelCalls {
  uint64_t sysfs_reads = 0;     // attribute reads: open, read, close
  uint64_t sysfs_writes = 0;    // attribute writes: open, write, close
  uint64_t sysfs_stats = 0;     // existence checks
  uint64_t sysfs_listings = 0;  // directory listings
  uint64_t sysfs_links = 0;     // symlink reads
  uint64_t netlink_requests = 0;
  uint64_t udev_lookups = 0;  // libudev device lookups (sysfs and udev's database)

  [[nodiscard]] KernelCalls operator-(const KernelCalls& earlier) const;
  // "120 sysfs reads, 40 sysfs writes, 3 stats, 2 listings, 16 link reads, 64 netlink
  // requests, 8 udev lookups"
  [[nodiscard]] std::string describe() const;
};

// The calls made since the process started, from every thread.
KernelCalls kernel_calls();

// For the adapters: one call made.
enum class KernelCall : std::uint8_t {
  kSysfsRead,
  kSysfsWrite,
  kSysfsStat,
  kSysfsListing,
  kSysfsLink,
  kNetlinkRequest,
  kUdevLookup,
  kCount
};
void count(KernelCall call);

}  // namespace vfready::host
