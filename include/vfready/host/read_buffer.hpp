// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace vfready::host {

// A buffer the kernel reads messages into, not zeroed when made: only the pages reads
// fill become resident. (A zeroed 64 KiB buffer was 64 KiB of vfreadyd's RSS for its
// whole life, where a message takes a few KiB of it.)
class ReadBuffer {
 public:
  explicit ReadBuffer(std::size_t size = 0)
      : data_(std::make_unique_for_overwrite<uint8_t[]>(size)), size_(size) {}
  [[nodiscard]] uint8_t* data() { return data_.get(); }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] std::span<uint8_t> span() { return {data_.get(), size_}; }
  // At least `size` bytes from now on (what was in it is not kept).
  void grow(std::size_t size) {
    if (size > size_) {
      data_ = std::make_unique_for_overwrite<uint8_t[]>(size);
      size_ = size;
    }
  }

 private:
  std::unique_ptr<uint8_t[]> data_;
  std::size_t size_;
};

}  // namespace vfready::host
