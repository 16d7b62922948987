// SPDX-License-Identifier: Apache-2.0
// Coroutine frames are reused by the thread that freed them, by size; under
// AddressSanitizer every frame is the heap's, so that a use after free is seen.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <vector>

#include "vfready/pipeline/task.hpp"

using vfready::pipeline::detail::allocate_frame;
using vfready::pipeline::detail::frames_pooled;
using vfready::pipeline::detail::free_frame;

TEST(ACoroutineFrame, IsReusedBySizeAndHoldsWhatItIsGiven) {
  void* a = allocate_frame(200);
  std::memset(a, 0xab, 200);  // all of its size is the caller's
  free_frame(a, 200);
  void* b = allocate_frame(250);  // the same size class (193 to 256 bytes)
  if (frames_pooled()) {
    EXPECT_EQ(b, a) << "a freed frame of the size is taken again";
  }
  void* c = allocate_frame(200);  // none left of that size: a new one
  EXPECT_NE(c, b);
  std::memset(c, 0xcd, 200);
  free_frame(b, 250);
  free_frame(c, 200);
}

TEST(ACoroutineFrame, IsNeverHandedOutTwiceWhenManyAreFreedAndTaken) {
  std::vector<void*> frames;
  for (int i = 0; i < 200; ++i) {
    frames.push_back(allocate_frame(100));
  }
  for (void* f : frames) {
    free_frame(f, 100);
  }
  // Taken again: the kept ones (some dozens) come back, each once, the rest are new.
  std::set<void*> again;
  for (int i = 0; i < 200; ++i) {
    EXPECT_TRUE(again.insert(allocate_frame(100)).second) << "a frame handed out twice";
  }
  for (void* f : again) {
    free_frame(f, 100);
  }
  void* big = allocate_frame(64 * 1024);  // past the sizes kept
  std::memset(big, 0, 64 * 1024);
  free_frame(big, 64 * 1024);
}
