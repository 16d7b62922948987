// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace vfready::model {

// A few bytes of text held in place, not allocated: a PCI address or a GUID as written
// (a GUID's 23 characters are past std::string's inline room, and the status renders
// one for each VF).
class ShortText {
 public:
  static constexpr std::size_t kCapacity = 24;

  [[nodiscard]] std::string_view view() const { return {data_.data(), size_}; }
  operator std::string_view() const { return view(); }  // NOLINT: a view of it, as string's
  [[nodiscard]] std::string str() const { return std::string(view()); }

  // For the writers of a text (pci_address.cpp, guid.cpp): `size` is at most kCapacity.
  [[nodiscard]] char* data() { return data_.data(); }
  void set_size(std::size_t size) { size_ = static_cast<uint8_t>(size); }

 private:
  std::array<char, kCapacity> data_{};
  uint8_t size_ = 0;
};

}  // namespace vfready::model
