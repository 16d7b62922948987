// SPDX-License-Identifier: Apache-2.0
// Kernel-log lines (one per input line) as the driver check scans them: any text,
// however long its numbers or lines, gives findings or none, never an exception.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vfready/model/checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find('\n', start);
    end = end == std::string_view::npos ? text.size() : end;
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  static_cast<void>(vfready::model::scan_kernel_log(lines));
  return 0;
}
