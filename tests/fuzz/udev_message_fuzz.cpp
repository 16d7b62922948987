// SPDX-License-Identifier: Apache-2.0
// udevd's messages to monitors (anyone root may send to its group): the parser answers a
// netdev event or nothing for any bytes, and never reads past them.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "vfready/host/udev_message.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const auto e = vfready::host::parse_udev_message(std::span(data, size));
  if (e && (e->ifindex <= 0 || e->devpath.size() > size || e->name.empty() ||
            !e->devpath.ends_with(e->name))) {
    std::abort();
  }
  return 0;
}
