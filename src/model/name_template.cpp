// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/name_template.hpp"

#include <algorithm>

#include "text.hpp"

namespace vfready::model {

const std::vector<std::string>& NameTemplate::known_fields() {
  static const std::vector<std::string> kFields = {"pf_index", "pf_name", "pf_kernel_name", "vf",
                                                   "pci",      "vf_pci",  "numa_node"};
  return kFields;
}

Result<NameTemplate> NameTemplate::parse(std::string_view text) {
  NameTemplate t;
  t.text_ = std::string(text);
  std::string literal;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '}') {
      return Error{"template " + text::quote(text) + ": unmatched '}' at offset " +
                   std::to_string(i)};
    }
    if (text[i] != '{') {
      literal += text[i];
      continue;
    }
    const auto close = text.find('}', i);
    if (close == std::string_view::npos) {
      return Error{"template " + text::quote(text) + ": '{' at offset " + std::to_string(i) +
                   " is not closed"};
    }
    const std::string name(text.substr(i + 1, close - i - 1));
    const auto& known = known_fields();
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string valid;
      for (const auto& k : known) {
        valid += (valid.empty() ? "{" : ", {") + k + "}";
      }
      return Error{"template " + text::quote(text) + ": unknown field {" + name +
                   "} (valid: " + valid + ")"};
    }
    if (!literal.empty()) {
      t.parts_.emplace_back(std::move(literal));
      literal.clear();
    }
    t.parts_.emplace_back(Field{name});
    i = close;
  }
  if (!literal.empty()) {
    t.parts_.emplace_back(std::move(literal));
  }
  return t;
}

std::string NameTemplate::render(const std::map<std::string, std::string>& values) const {
  std::string out;
  for (const auto& part : parts_) {
    if (const auto* lit = std::get_if<std::string>(&part)) {
      out += *lit;
    } else {
      const auto& name = std::get<Field>(part).name;
      auto it = values.find(name);
      out += it == values.end() ? "{" + name + "}" : it->second;
    }
  }
  return out;
}

bool NameTemplate::uses(std::string_view field) const {
  return std::any_of(parts_.begin(), parts_.end(), [&](const auto& part) {
    const auto* f = std::get_if<Field>(&part);
    return f != nullptr && f->name == field;
  });
}

}  // namespace vfready::model
