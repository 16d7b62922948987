// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/yaml_writer.hpp"

#include <algorithm>

namespace vfready::model {

namespace {

std::string scalar(const nlohmann::json& v) {
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string key_text(const std::string& key) {
  const bool plain = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
  return plain ? key : scalar(nlohmann::json(key));
}

bool nested(const nlohmann::json& v) { return v.is_structured() && !v.empty(); }

void write(std::string& out, const nlohmann::json& v, const std::string& indent);

// A mapping's or sequence's item after "key:" or "-": inline when it is a scalar or
// empty, else on the lines below.
void item(std::string& out, const nlohmann::json& v, const std::string& indent) {
  if (!nested(v)) {
    out += " " + (v.is_object() ? std::string("{}") : v.is_array() ? "[]" : scalar(v)) + "\n";
    return;
  }
  out += "\n";
  write(out, v, indent + "  ");
}

void write(std::string& out, const nlohmann::json& v, const std::string& indent) {
  if (v.is_object()) {
    for (const auto& [key, value] : v.items()) {
      out += indent + key_text(key) + ":";
      item(out, value, indent);
    }
  } else if (v.is_array()) {
    for (const auto& value : v) {
      out += indent + "-";
      item(out, value, indent);
    }
  } else {
    out += indent + scalar(v) + "\n";
  }
}

}  // namespace

std::string to_yaml(const nlohmann::json& value) {
  if (!nested(value)) {
    return (value.is_object() ? std::string("{}") : value.is_array() ? "[]" : scalar(value)) + "\n";
  }
  std::string out;
  write(out, value, "");
  return out;
}

}  // namespace vfready::model
