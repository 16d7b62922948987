// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/json_reader.hpp"

namespace vfready::model {

namespace {

const nlohmann::json& null_json() {
  static const nlohmann::json kNull;
  return kNull;
}

std::string list(std::initializer_list<const char*> items) {
  std::string out;
  for (const char* item : items) {
    out += (out.empty() ? "" : ", ") + std::string(item);
  }
  return out;
}

}  // namespace

void JsonReader::fail(const std::string& what) const { throw JsonError{path_, what}; }

void JsonReader::require() const {
  if (value_->is_null()) {
    fail("is required");
  }
}

bool JsonReader::has(const char* key) const {
  return value_->is_object() && value_->contains(key) && !(*value_)[key].is_null();
}

void JsonReader::only_keys(std::initializer_list<const char*> keys) const {
  require();
  if (!value_->is_object()) {
    fail("must be an object");
  }
  for (const auto& [key, member] : value_->items()) {
    bool known = false;
    for (const char* k : keys) {
      known = known || key == k;
    }
    if (!known) {
      throw JsonError{path_ + "." + key, "unknown key (valid here: " + list(keys) + ")"};
    }
  }
}

JsonReader JsonReader::operator[](const char* key) const {
  const auto child_path = path_ + "." + key;
  if (!value_->is_object() || !value_->contains(key)) {
    return {null_json(), child_path};
  }
  return {(*value_)[key], child_path};
}

std::size_t JsonReader::array_size() const {
  require();
  if (!value_->is_array()) {
    fail("must be an array");
  }
  return value_->size();
}

JsonReader JsonReader::operator[](std::size_t index) const {
  return {(*value_)[index], path_ + "[" + std::to_string(index) + "]"};
}

std::string JsonReader::string() const {
  require();
  if (!value_->is_string()) {
    fail("must be a string");
  }
  return value_->get<std::string>();
}

std::string JsonReader::nonempty_string() const {
  auto s = string();
  if (s.empty()) {
    fail("must not be empty");
  }
  return s;
}

uint64_t JsonReader::uint(uint64_t max) const { return uint_in(0, max); }

uint64_t JsonReader::uint_in(uint64_t min, uint64_t max) const {
  require();
  if (!value_->is_number_integer() ||
      (!value_->is_number_unsigned() && value_->get<int64_t>() < 0)) {
    fail("must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
  }
  const auto v = value_->get<uint64_t>();
  if (v < min || v > max) {
    fail("is " + std::to_string(v) + "; must be from " + std::to_string(min) + " to " +
         std::to_string(max));
  }
  return v;
}

int64_t JsonReader::integer() const {
  require();
  if (!value_->is_number_integer()) {
    fail("must be an integer");
  }
  return value_->get<int64_t>();
}

bool JsonReader::boolean() const {
  require();
  if (!value_->is_boolean()) {
    fail("must be true or false");
  }
  return value_->get<bool>();
}

std::string JsonReader::one_of(std::initializer_list<const char*> choices) const {
  auto s = string();
  for (const char* c : choices) {
    if (s == c) {
      return s;
    }
  }
  fail("is \"" + s + "\"; must be one of " + list(choices));
}

}  // namespace vfready::model
