// SPDX-License-Identifier: Apache-2.0
// What vfreadyctl reads (a status file anyone with write access to /run/vfready could
// have put there, or a bus peer's answer): any text parses as a bounded JSON document or
// is refused, and whatever parses renders as a table without a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "vfready/model/json_document.hpp"
#include "vfready/model/status_table.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto status = vfready::model::parse_json_document("status.json", text);
  if (!status || !status.value().is_object()) {
    return 0;
  }
  static_cast<void>(vfready::model::render_status(status.value(), false, true));
  static_cast<void>(vfready::model::render_status(status.value(), true, false));
  return 0;
}
