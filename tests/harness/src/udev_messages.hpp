// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// What udevd sends to libudev monitors: one netlink message per processed event on
// NETLINK_KOBJECT_UEVENT multicast group 2 ("udev"), a 40-byte libudev header and then
// the device's properties as NUL-terminated KEY=VALUE strings. Multicast stays in the
// sender's network namespace, so monitors in the fake host's namespace hear these and
// never the real udevd.
namespace vfready::fakehost {

// MurmurHash2, seed 0, as udev hashes a subsystem name for the monitors' kernel filter.
uint32_t murmur_hash2(std::string_view data);

// The bytes of one message (for tests).
std::vector<char> udev_message(const std::string& subsystem,
                               const std::vector<std::pair<std::string, std::string>>& properties);

class UdevMessages {
 public:
  // Opens the sending socket inside the network namespace `netns_fd`.
  explicit UdevMessages(int netns_fd);
  ~UdevMessages();
  UdevMessages(const UdevMessages&) = delete;
  UdevMessages& operator=(const UdevMessages&) = delete;

  // Sends ACTION, DEVPATH, SUBSYSTEM, SEQNUM and `properties`. Nobody listening is fine.
  void send(const std::string& action, const std::string& devpath, const std::string& subsystem,
            const std::vector<std::pair<std::string, std::string>>& properties);

 private:
  int fd_ = -1;
  std::mutex mu_;
  uint64_t seqnum_ = 0;
};

}  // namespace vfready::fakehost
