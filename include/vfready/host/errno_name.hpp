// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

namespace vfready::host {

// errno as text ("Device or resource busy (EBUSY)"); kStuck says the call did not
// return. Thread-safe.
std::string errno_name(int err);

}  // namespace vfready::host
