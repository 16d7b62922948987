// SPDX-License-Identifier: Apache-2.0
// Link messages from the kernel (answers and events): the parser answers a link or
// nothing for any bytes, and never reads past them.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "vfready/host/link_message.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const auto m = vfready::host::parse_link_message(std::span(data, size));
  if (m && m->link.name.size() > size) {
    std::abort();
  }
  // The walk that ends at the name and MTU answers for the same messages (the names
  // may differ where one is given twice, which the kernel never does).
  const auto brief = vfready::host::parse_link_message(std::span(data, size),
                                                       vfready::host::LinkParts::kNameAndMtu);
  if (m.has_value() != brief.has_value() || (brief && brief->link.name.size() > size)) {
    std::abort();
  }
  return 0;
}
