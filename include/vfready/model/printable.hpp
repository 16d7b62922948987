// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace vfready::model {

// Text from the host or a user made safe where it leaves the process (D-Bus, JSON, a
// message, the journal): valid UTF-8 is kept; control bytes and bytes that are not
// valid UTF-8 become \xNN. A netdev may be named with any bytes but '/', ':', NUL and
// whitespace, and D-Bus and JSON take valid UTF-8 only.
std::string printable(std::string_view text);
// Whether printable(text) is `text` as it is.
bool is_printable(std::string_view text);
// What a caller sent, as an answer may echo it: printable, and at most `most` of its
// bytes, then "... (N bytes)" (an 8 MiB D-Bus key escaped to 32 MiB made a reply the
// bus refused, and the bus dropped vfreadyd).
std::string printable_head(std::string_view text, std::size_t most = 64);

}  // namespace vfready::model
