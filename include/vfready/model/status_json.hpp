// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <nlohmann/json.hpp>

#include "vfready/model/status.hpp"

// The status as JSON: what Describe() returns and `vfreadyctl status --json` prints.
// Keys are snake_case and stable; docs/dbus-api.md lists them.
namespace vfready::model {

nlohmann::json to_json(const VfStatus& vf);
nlohmann::json to_json(const PfStatus& pf);
nlohmann::json to_json(const DaemonStatus& status);

// The PF whose PCI address, name or VF (PCI address or name) is `key`; nullptr if none.
const PfStatus* find_pf(const DaemonStatus& status, const std::string& key);

}  // namespace vfready::model
