// SPDX-License-Identifier: Apache-2.0
// Coroutine frames, kept for reuse by the thread that freed them (task.hpp).
#include <array>
#include <cstddef>
#include <new>
#include <vector>

#include "vfready/pipeline/task.hpp"

namespace vfready::pipeline::detail {

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kPooled = false;  // a reused frame would hide a use after free
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kPooled = false;
#else
constexpr bool kPooled = true;
#endif
#else
constexpr bool kPooled = true;
#endif

constexpr std::size_t kGrain = 64;    // sizes rounded up to this
constexpr std::size_t kClasses = 64;  // frames of up to 63 x 64 = 4,032 bytes are kept
constexpr std::size_t kKeep = 64;     // at most this many of each size: what was live at once

// Set as the thread's pool goes (at the thread's exit): a frame freed after it (a task
// a static object holds) goes back to the heap.
thread_local bool t_pool_gone = false;

struct Pool {
  std::array<std::vector<void*>, kClasses> free;
  Pool() = default;
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool() {
    t_pool_gone = true;
    for (auto& frames : free) {
      for (void* frame : frames) {
        ::operator delete(frame);
      }
    }
  }
};

Pool& pool() {
  thread_local Pool p;
  return p;
}

std::size_t class_of(std::size_t size) { return (size + kGrain - 1) / kGrain; }

}  // namespace

bool frames_pooled() { return kPooled; }

void* allocate_frame(std::size_t size) {
  const auto c = class_of(size);
  if (!kPooled || c >= kClasses) {
    return ::operator new(size);
  }
  if (t_pool_gone) {
    // Its class's whole size all the same: it may be freed on a thread whose pool lives,
    // and be handed out there for any size of the class.
    return ::operator new(c* kGrain);
  }
  auto& frames = pool().free.at(c);
  if (!frames.empty()) {
    void* frame = frames.back();
    frames.pop_back();
    return frame;
  }
  if (frames.capacity() == 0) {
    frames.reserve(kKeep);  // here, where a throw is allowed: free_frame() never grows it
  }
  return ::operator new(c* kGrain);
}

void free_frame(void* frame, std::size_t size) noexcept {
  const auto c = class_of(size);
  if (kPooled && c < kClasses && !t_pool_gone) {
    auto& frames = pool().free.at(c);
    if (frames.size() < frames.capacity()) {
      frames.push_back(frame);
      return;
    }
  }
  ::operator delete(frame);
}

}  // namespace vfready::pipeline::detail
