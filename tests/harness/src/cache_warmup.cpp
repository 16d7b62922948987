// SPDX-License-Identifier: Apache-2.0
#include "cache_warmup.hpp"

#include <unistd.h>

#include <array>

namespace vfready::fakehost {

namespace {

void warm(const Tree& tree, const std::string& mountpoint, const std::string& dir) {
  for (const auto& name : tree.list(dir)) {
    const auto path = dir.empty() ? name : dir + "/" + name;
    // One LOOKUP (the kernel keeps the entry for the mount's entry timeout), and a
    // READLINK of a link (kept in its page cache); anything else is EINVAL at once.
    std::array<char, 512> target{};
    static_cast<void>(::readlink((mountpoint + "/" + path).c_str(), target.data(), target.size()));
    if (const auto e = tree.stat(path); e && e->kind == Tree::Kind::kDir) {
      warm(tree, mountpoint, path);
    }
  }
}

}  // namespace

void warm_kernel_caches(const Tree& tree, const std::string& mountpoint) {
  warm(tree, mountpoint, "");
}

}  // namespace vfready::fakehost
