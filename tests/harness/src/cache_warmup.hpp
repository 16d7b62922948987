// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "tree.hpp"

namespace vfready::fakehost {

// Looks up every name of `tree` through its FUSE mount at `mountpoint` (and reads every
// link), so that the kernel holds them: a client's first path walk then costs no FUSE
// round trip a name, as kernfs finds a name inside the kernel (kernfs_iop_lookup(),
// fs/kernfs/dir.c). A cost of the fake host's removed, not a behaviour modelled. Not
// through links (they point back into the tree).
void warm_kernel_caches(const Tree& tree, const std::string& mountpoint);

}  // namespace vfready::fakehost
