// SPDX-License-Identifier: Apache-2.0
#include "vfready/host/kernel_calls.hpp"

#include <array>
#include <atomic>

namespace vfready::host {

namespace {

constexpr auto kKinds = static_cast<std::size_t>(KernelCall::kCount);
// Relaxed: each count is a tally read now and then, ordered with nothing else.
std::array<std::atomic<uint64_t>, kKinds> g_calls{};

}  // namespace

void count(KernelCall call) {
  g_calls.at(static_cast<std::size_t>(call)).fetch_add(1, std::memory_order_relaxed);
}

KernelCalls kernel_calls() {
  const auto at = [](KernelCall c) {
    return g_calls.at(static_cast<std::size_t>(c)).load(std::memory_order_relaxed);
  };
  return {.sysfs_reads = at(KernelCall::kSysfsRead),
          .sysfs_writes = at(KernelCall::kSysfsWrite),
          .sysfs_stats = at(KernelCall::kSysfsStat),
          .sysfs_listings = at(KernelCall::kSysfsListing),
          .sysfs_links = at(KernelCall::kSysfsLink),
          .netlink_requests = at(KernelCall::kNetlinkRequest),
          .udev_lookups = at(KernelCall::kUdevLookup)};
}

KernelCalls KernelCalls::operator-(const KernelCalls& earlier) const {
  return {.sysfs_reads = sysfs_reads - earlier.sysfs_reads,
          .sysfs_writes = sysfs_writes - earlier.sysfs_writes,
          .sysfs_stats = sysfs_stats - earlier.sysfs_stats,
          .sysfs_listings = sysfs_listings - earlier.sysfs_listings,
          .sysfs_links = sysfs_links - earlier.sysfs_links,
          .netlink_requests = netlink_requests - earlier.netlink_requests,
          .udev_lookups = udev_lookups - earlier.udev_lookups};
}

std::string KernelCalls::describe() const {
  return std::to_string(sysfs_reads) + " sysfs reads, " + std::to_string(sysfs_writes) +
         " sysfs writes, " + std::to_string(sysfs_stats) + " stats, " +
         std::to_string(sysfs_listings) + " listings, " + std::to_string(sysfs_links) +
         " link reads, " + std::to_string(netlink_requests) + " netlink requests, " +
         std::to_string(udev_lookups) + " udev lookups";
}

}  // namespace vfready::host
