// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "vfready/model/kernel_features.hpp"

using vfready::model::renames_up_links;

TEST(TheKernelRelease, TellsWhetherAnUpNetdevCanBeRenamed) {
  EXPECT_FALSE(renames_up_links("4.18.0-553.el8_10.x86_64"));      // RHEL 8
  EXPECT_FALSE(renames_up_links("5.14.0-427.13.1.el9_4.x86_64"));  // RHEL 9
  EXPECT_FALSE(renames_up_links("5.15.0-91-generic"));             // Ubuntu 22.04
  EXPECT_FALSE(renames_up_links("6.1.0-28-amd64"));                // Debian 12
  EXPECT_TRUE(renames_up_links("6.2.0-39-generic"));
  EXPECT_TRUE(renames_up_links("6.8.0-55-generic"));  // Ubuntu 24.04
  EXPECT_TRUE(renames_up_links("6.18.44"));
  EXPECT_TRUE(renames_up_links("garbage")) << "unknown: tried, EBUSY tells";
}
