// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vfready/host/device_calls.hpp"

// The helper process of DeviceCalls and what passes between it and the daemon: one
// SOCK_SEQPACKET message each way per batch of calls.
namespace vfready::host::helper {

// At most this many calls go in one message (each read answers up to a page).
inline constexpr std::size_t kBatch = 14;

// A new helper, detached from the daemon (its parent exits at once, so nothing has to
// reap it), holding no descriptor of the daemon's but its end of the socket. Answers our
// end, or -1 with *err set; *pid is the helper's process.
int spawn(int* err, int* pid);
// Forks twice: the grandchild, detached, runs `become` (which must not return) on its
// end of a new socket pair. Answers our end, or -1 with *err set; *pid is the
// grandchild's process (0 when it could not be told).
int fork_detached(int* err, const std::function<void(int)>& become, int* pid);
// In a new process: keeps only `socket` (as fd 3) and stdio, takes signals as a process
// does by default, and is `name` in `ps`.
void keep_only(int socket, const char* name);
// In a new process: becomes a helper on `socket` (kept as fd 3, every other descriptor
// but stdio closed) and serves calls until the daemon closes its end.
[[noreturn]] void become_helper(int socket);

// A batch of at most kBatch calls as one message; a file's path under `root` when one
// is given.
std::string encode(std::span<const DeviceOp> ops, std::optional<std::string_view> root = {});
// The calls of an encoded batch (empty when it is not one).
std::vector<DeviceOp> decode_request(const std::string& request);
// The helper's answer to a batch; false when it is not one.
bool decode(const char* data, std::size_t size, std::vector<DeviceOpResult>* out);
// In the helper: one rtnetlink request (`size` bytes) on its own socket, and the
// kernel's answer: its errno (0 for an acknowledgement), or the link it answered, kept
// in `out` (at most `room` bytes: its headers, name, MTU, altnames and VFs) with its length.
int32_t netlink_request(const char* request, uint32_t size, char* out, uint32_t room,
                        uint32_t* len);

// The largest answer a batch can have: a page a call, as one netlink answer may use the
// room of the calls after it.
std::size_t max_answer();

}  // namespace vfready::host::helper
