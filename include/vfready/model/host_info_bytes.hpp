// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

#include "vfready/model/inventory.hpp"
#include "vfready/model/result.hpp"

// The host as read (HostInfo) as bytes and back: how the host's reader process hands
// vfreadyd what it read. Every field goes; lengths and counts are checked as they are
// read back, so that bytes cut short or of another build are an error, never a host.
namespace vfready::model {

std::string encode_host(const HostInfo& host);
Result<HostInfo> decode_host(std::string_view bytes);

}  // namespace vfready::model
