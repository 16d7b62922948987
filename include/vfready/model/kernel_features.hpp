// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>

// What the running kernel does, told from its release (uname -r), where vfready must
// know before it asks. Pure.
namespace vfready::model {

// Whether the kernel renames a netdev that is up. Before Linux 6.2 dev_change_name()
// answered EBUSY for an UP netdev (unless its driver sets IFF_LIVE_RENAME_OK, which
// IPoIB does not); commit bd039b5ea2a9 ("net/core: Allow live renaming when an
// interface is up") lifted that. A release that does not start with a version counts
// as new enough: the rename is tried, and an EBUSY answer tells.
bool renames_up_links(std::string_view kernel_release);

}  // namespace vfready::model
