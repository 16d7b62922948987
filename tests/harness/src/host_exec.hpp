// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

// Runs a command as if on the fake host: in its network namespace, and in a mount
// namespace of its own where /sys, /run, /dev/kmsg and /proc/sys/kernel/osrelease are the
// fake host's (bind mounts over the real ones). vfreadyd runs there with its default
// paths and libudev, as it does on a node. Replaces the calling process (execvp);
// returns only on failure, with the reason thrown. With a `stamp` file, the time of the
// exec (CLOCK_MONOTONIC, in ns) is written there just before it: a benchmark times the
// command from its own start, not from this wrapper's.
namespace vfready::fakehost {

[[noreturn]] void exec_in_host(const std::string& root, const std::string& netns,
                               const std::vector<std::string>& command,
                               const std::string& stamp = "");

}  // namespace vfready::fakehost
