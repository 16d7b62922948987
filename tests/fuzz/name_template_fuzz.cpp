// SPDX-License-Identifier: Apache-2.0
// Name templates from the configuration: parsing any text answers a template or an
// error; a template renders with every field it may use. Whatever a rendered name is,
// one IfName accepts is one the kernel's dev_valid_name() accepts and keeps as given
// (no '%', which dev_get_valid_name() turns into a number of its own).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <string_view>

#include "vfready/model/if_name.hpp"
#include "vfready/model/name_template.hpp"

namespace {

// net/core/dev.c dev_valid_name(), with the kernel's Latin-1 isspace() (lib/ctype.c).
bool kernel_valid(std::string_view name, std::size_t max) {
  if (name.empty() || name.size() > max || name == "." || name == "..") {
    return false;
  }
  for (char c : name) {
    const auto b = static_cast<unsigned char>(c);
    if (c == '/' || c == ':' || c == '\0' || b == ' ' || (b >= '\t' && b <= '\r') || b == 0xa0) {
      return false;
    }
  }
  return true;
}

void check(std::string_view name) {
  if (vfready::model::IfName::parse(name) &&
      (!kernel_valid(name, 15) || name.find('%') != std::string_view::npos)) {
    std::abort();  // accepted a name the kernel would refuse or rewrite
  }
  if (vfready::model::AltName::parse(name) &&
      (!kernel_valid(name, 127) || name.find('%') != std::string_view::npos)) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check(text);  // the input itself as a name
  auto t = vfready::model::NameTemplate::parse(text);
  if (!t) {
    return 0;
  }
  std::map<std::string, std::string> values;
  for (const auto& field : vfready::model::NameTemplate::known_fields()) {
    values[field] = "x" + field;
  }
  check(t->render(values));
  static_cast<void>(t->uses("vf"));
  return 0;
}
