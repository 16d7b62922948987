// SPDX-License-Identifier: Apache-2.0
// The configuration as vfreadyd reads it: a main file and its drop-ins (the input split
// at NUL bytes), or, when the input starts with '#', compatibility tables. Whatever the
// bytes, parsing answers a value or an error that names a file; it never throws,
// crashes or overflows the stack.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "vfready/model/compat_table.hpp"
#include "vfready/model/config.hpp"

namespace {

std::vector<vfready::model::ConfigSource> files_of(std::string_view input) {
  std::vector<vfready::model::ConfigSource> files;
  std::size_t start = 0;
  for (int i = 0; start <= input.size(); ++i) {
    auto end = input.find('\0', start);
    end = end == std::string_view::npos ? input.size() : end;
    files.push_back({i == 0 ? "/etc/vfready/vfready.json"
                            : "/etc/vfready/vfready.d/" + std::to_string(i) + ".json",
                     std::string(input.substr(start, end - start))});
    start = end + 1;
  }
  return files;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const bool tables = input.starts_with('#');
  if (tables) {
    input.remove_prefix(1);
  }
  const auto files = files_of(input);
  const std::string& main_file = files.front().path;
  if (tables) {
    auto table = vfready::model::parse_compat_table(files);
    if (!table && table.error().message.find("/etc/vfready/") == std::string::npos) {
      std::abort();  // an error must name the file that holds it
    }
    return 0;
  }
  auto config = vfready::model::parse_config(files);
  if (!config && config.error().message.find("/etc/vfready/") == std::string::npos) {
    std::abort();
  }
  static_cast<void>(main_file);
  return 0;
}
