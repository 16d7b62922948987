// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

// Fake-host tests mount FUSE and make namespaces: they need root.
#define VFREADY_REQUIRE_ROOT()                                        \
  do {                                                                \
    if (geteuid() != 0) {                                             \
      GTEST_SKIP() << "needs root (FUSE mounts, network namespaces)"; \
    }                                                                 \
  } while (false)
