// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

// Values as bytes between the daemon and its own processes (a worker, a reader of the
// configuration): numbers as they are in memory (both ends are the same binary), a text
// as its 32-bit length and its bytes. ByteReader reads what ByteWriter wrote, in the
// same order, and throws std::out_of_range when the bytes end first.
namespace vfready::model {

class ByteWriter {
 public:
  template <class T>
  void number(T v) {
    static_assert(std::is_arithmetic_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof v);  // NOLINT: bytes of a number
  }
  void text(std::string_view s) {
    number(static_cast<uint32_t>(s.size()));
    bytes_.append(s);
  }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}
  template <class T>
  T number() {
    static_assert(std::is_arithmetic_v<T>);
    T v{};
    std::memcpy(&v, take(sizeof v).data(), sizeof v);
    return v;
  }
  std::string text() { return std::string(take(number<uint32_t>())); }
  [[nodiscard]] std::size_t left() const { return bytes_.size() - at_; }
  [[nodiscard]] bool done() const { return at_ == bytes_.size(); }

 private:
  std::string_view take(std::size_t n) {
    if (n > left()) {
      throw std::out_of_range("cut short");
    }
    at_ += n;
    return bytes_.substr(at_ - n, n);
  }
  std::string_view bytes_;
  std::size_t at_ = 0;
};

}  // namespace vfready::model
