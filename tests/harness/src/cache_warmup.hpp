// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string>

#include "tree.hpp"

namespace vfready::fakehost {

// Looks up every name of `tree` through its FUSE mount at `mountpoint` (and reads every
// link), so that the kernel holds them as it holds sysfs's once udev's coldplug has
// walked it at boot: a client's first path walk then costs no FUSE round trip a name,
// where kernfs's costs none. Not through links (they point back into the tree). The
// names looked up.
std::size_t warm_kernel_caches(const Tree& tree, const std::string& mountpoint);

}  // namespace vfready::fakehost
