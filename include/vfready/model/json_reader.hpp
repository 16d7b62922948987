// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>

namespace vfready::model {

// Where in a JSON document a value was wrong, and why. Thrown by JsonReader inside
// parsers only; their public functions turn it into an Error.
struct JsonError {
  std::string path;  // "$.pfs[0].vf_name"
  std::string what;
};

// Typed, path-aware access to a JSON value for parsers whose errors must say where:
// every failure names the JSON path and what would be valid.
class JsonReader {
 public:
  JsonReader(const nlohmann::json& value, std::string path)
      : value_(&value), path_(std::move(path)) {}

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const nlohmann::json& json() const { return *value_; }
  [[nodiscard]] bool has(const char* key) const;
  [[nodiscard]] bool is_null() const { return value_->is_null(); }

  // Fails when this is not an object or has a key outside `keys`.
  void only_keys(std::initializer_list<const char*> keys) const;

  // A member (null when absent: the typed getters then say "is required").
  [[nodiscard]] JsonReader operator[](const char* key) const;
  // Elements of an array; fails when this is not an array.
  [[nodiscard]] std::size_t array_size() const;
  [[nodiscard]] JsonReader operator[](std::size_t index) const;

  [[nodiscard]] std::string string() const;
  [[nodiscard]] std::string nonempty_string() const;
  [[nodiscard]] uint64_t uint(uint64_t max) const;
  [[nodiscard]] uint64_t uint_in(uint64_t min, uint64_t max) const;
  [[nodiscard]] int64_t integer() const;
  [[nodiscard]] bool boolean() const;
  // One of `choices`.
  [[nodiscard]] std::string one_of(std::initializer_list<const char*> choices) const;

  [[noreturn]] void fail(const std::string& what) const;

 private:
  void require() const;

  const nlohmann::json* value_;
  std::string path_;
};

}  // namespace vfready::model
