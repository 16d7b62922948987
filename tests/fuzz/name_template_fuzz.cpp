// SPDX-License-Identifier: Apache-2.0
// Name templates from the configuration: parsing any text answers a template or an
// error; a template renders with every field it may use.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "vfready/model/name_template.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto t = vfready::model::NameTemplate::parse(text);
  if (!t) {
    return 0;
  }
  std::map<std::string, std::string> values;
  for (const auto& field : vfready::model::NameTemplate::known_fields()) {
    values[field] = "x" + field;
  }
  static_cast<void>(t->render(values));
  static_cast<void>(t->uses("vf"));
  return 0;
}
