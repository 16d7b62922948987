// SPDX-License-Identifier: Apache-2.0
// The host as bytes, from the host's reader process: any bytes decode to a host or an
// error, never past their end, and a host decoded is encoded to bytes that decode to it
// again (the same bytes once more).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "vfready/model/host_info_bytes.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const auto host =
      vfready::model::decode_host(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!host) {
    return 0;
  }
  const auto once = vfready::model::encode_host(host.value());
  const auto again = vfready::model::decode_host(once);
  if (!again || vfready::model::encode_host(again.value()) != once) {
    std::abort();
  }
  return 0;
}
