// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

// Runs a command as if on the fake host: in its network namespace, and in a mount
// namespace of its own where /sys, /run, /dev/kmsg and /proc/sys/kernel/osrelease are the
// fake host's (bind mounts over the real ones). vfreadyd runs there with its default
// paths and libudev, as it does on a node. Replaces the calling process (execvp);
// returns only on failure, with the reason thrown.
namespace vfready::fakehost {

[[noreturn]] void exec_in_host(const std::string& root, const std::string& netns,
                               const std::vector<std::string>& command);

}  // namespace vfready::fakehost
