// SPDX-License-Identifier: Apache-2.0
#include "udev_messages.hpp"

#include <arpa/inet.h>
#include <linux/netlink.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "errno_text.hpp"

namespace vfready::fakehost {

namespace {

constexpr uint32_t kUdevGroup = 2;
constexpr uint32_t kMagic = 0xfeedcafe;

// libudev's struct udev_monitor_netlink_header.
struct Header {
  char prefix[8];
  uint32_t magic;  // big-endian
  uint32_t header_size;
  uint32_t properties_off;
  uint32_t properties_len;
  uint32_t filter_subsystem_hash;  // big-endian
  uint32_t filter_devtype_hash;    // big-endian
  uint32_t filter_tag_bloom_hi;
  uint32_t filter_tag_bloom_lo;
};
static_assert(sizeof(Header) == 40);

}  // namespace

uint32_t murmur_hash2(std::string_view data) {
  constexpr uint32_t m = 0x5bd1e995;
  constexpr int r = 24;
  auto len = static_cast<uint32_t>(data.size());
  uint32_t h = 0 ^ len;
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());  // NOLINT: bytes
  while (len >= 4) {
    uint32_t k = 0;
    std::memcpy(&k, p, 4);
    k *= m;
    k ^= k >> r;
    k *= m;
    h *= m;
    h ^= k;
    p += 4;  // NOLINT: walking the bytes
    len -= 4;
  }
  switch (len) {
    case 3:
      h ^= uint32_t{p[2]} << 16U;  // NOLINT
      [[fallthrough]];
    case 2:
      h ^= uint32_t{p[1]} << 8U;  // NOLINT
      [[fallthrough]];
    case 1:
      h ^= uint32_t{p[0]};
      h *= m;
      break;
    default:
      break;
  }
  h ^= h >> 13U;
  h *= m;
  h ^= h >> 15U;
  return h;
}

std::vector<char> udev_message(const std::string& subsystem,
                               const std::vector<std::pair<std::string, std::string>>& properties) {
  std::string body;
  for (const auto& [key, value] : properties) {
    body += key + "=" + value;
    body.push_back('\0');
  }
  Header h{};
  std::memcpy(h.prefix, "libudev", 8);
  h.magic = htonl(kMagic);
  h.header_size = sizeof h;
  h.properties_off = sizeof h;
  h.properties_len = static_cast<uint32_t>(body.size());
  h.filter_subsystem_hash = htonl(murmur_hash2(subsystem));
  std::vector<char> out(sizeof h + body.size());
  std::memcpy(out.data(), &h, sizeof h);
  std::memcpy(out.data() + sizeof h, body.data(), body.size());
  return out;
}

UdevMessages::UdevMessages(int netns_fd) {
  // A socket acts in the namespace it was opened in: open it from a thread that has
  // entered the fake host's.
  std::string error;
  std::thread([&] {
    if (setns(netns_fd, CLONE_NEWNET) != 0) {
      error = "setns: " + errno_text(errno);
      return;
    }
    fd_ = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);
    if (fd_ < 0) {
      error = "uevent socket: " + errno_text(errno);
      return;
    }
    sockaddr_nl self{};
    self.nl_family = AF_NETLINK;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&self), sizeof self) != 0) {  // NOLINT: sockaddr
      error = "binding the uevent socket: " + errno_text(errno);
    }
  }).join();
  if (!error.empty()) {
    if (fd_ >= 0) {
      close(fd_);
    }
    throw std::runtime_error("udev messages: " + error);
  }
}

UdevMessages::~UdevMessages() { close(fd_); }

void UdevMessages::send(const std::string& action, const std::string& devpath,
                        const std::string& subsystem,
                        const std::vector<std::pair<std::string, std::string>>& properties) {
  std::lock_guard lock(mu_);
  std::vector<std::pair<std::string, std::string>> all = {{"ACTION", action},
                                                          {"DEVPATH", devpath},
                                                          {"SUBSYSTEM", subsystem},
                                                          {"SEQNUM", std::to_string(++seqnum_)}};
  all.insert(all.end(), properties.begin(), properties.end());
  const auto message = udev_message(subsystem, all);
  sockaddr_nl group{};
  group.nl_family = AF_NETLINK;
  group.nl_groups = kUdevGroup;
  // ECONNREFUSED: no monitor listens. Either way udevd goes on, and so does this.
  static_cast<void>(sendto(fd_, message.data(), message.size(), 0,
                           reinterpret_cast<sockaddr*>(&group), sizeof group));  // NOLINT
}

}  // namespace vfready::fakehost
