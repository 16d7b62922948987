// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vfready/model/short_text.hpp"

// JSON written straight into a string, as compact as nlohmann's dump() and parsed back
// to the same value, without a tree of allocated nodes in between: the status of 2,000
// VFs is rendered several times a second during a bring-up, and building it as a tree
// first was most of vfreadyd's own CPU time then.
namespace vfready::model {

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  // The key of the next value in the object being written.
  JsonWriter& key(std::string_view name);

  // A string: quotes, backslashes and control characters escaped; bytes that are not
  // valid UTF-8 become U+FFFD (JSON is UTF-8; nothing that reads it should choke).
  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(const ShortText& text) { return value(text.view()); }
  JsonWriter& value(int64_t number);
  JsonWriter& value(uint64_t number);
  JsonWriter& value(int number) { return value(static_cast<int64_t>(number)); }
  JsonWriter& value(unsigned number) { return value(static_cast<uint64_t>(number)); }
  JsonWriter& value(bool b);
  JsonWriter& null();
  // null for "" (text that is not known), the string otherwise.
  JsonWriter& text_or_null(std::string_view text);
  // JSON text made elsewhere, written as the next value as it is.
  JsonWriter& raw(std::string_view json);

  template <typename T>
  JsonWriter& field(std::string_view name, const T& v) {
    return key(name).value(v);
  }
  JsonWriter& strings(const std::vector<std::string>& list);

 private:
  void separate();  // a comma before every value of a container but its first
  template <typename Integer>
  JsonWriter& integer(Integer number);

  void open(char bracket);
  void close(char bracket);

  std::string& out_;
  // Per open container (bit `depth_ - 1` the innermost): a value is written in it.
  uint64_t written_ = 0;
  int depth_ = 0;
  bool after_key_ = false;
};

}  // namespace vfready::model
