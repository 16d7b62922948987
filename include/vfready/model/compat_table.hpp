// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vfready/model/config.hpp"
#include "vfready/model/result.hpp"
#include "vfready/model/version.hpp"

// Which driver releases work with which kernels, and the firmware each device needs:
// data users can extend (config/compatibility.json), not code.
namespace vfready::model {

struct VersionRange {
  std::optional<Version> from;    // inclusive
  std::optional<Version> before;  // exclusive
  [[nodiscard]] bool contains(const Version& v) const {
    return (!from || !(v < *from)) && (!before || v < *before);
  }
};

struct DriverCompat {
  std::string module;
  VersionRange versions;  // of the module
  VersionRange kernel;    // of the running kernel's release
  bool compatible = false;
  std::string remedy;
  std::string source;  // where the fact comes from
};

struct FirmwareMinimum {
  uint16_t device = 0;
  std::string name;
  Version minimum = Version::parse("0").value();
  std::string source;
};

struct CompatTable {
  std::vector<DriverCompat> drivers;  // first match wins
  std::vector<FirmwareMinimum> firmware;
  std::vector<std::string> files;  // the files read, in the order given

  [[nodiscard]] const DriverCompat* find(const std::string& module, const Version& version,
                                         const Version& kernel) const;
  [[nodiscard]] const FirmwareMinimum* firmware_for(uint16_t device) const;
};

// Reads table files; entries of later files come first, so a user's file (given
// after the shipped one) overrides it. Errors name the file and JSON path.
Result<CompatTable> parse_compat_table(const std::vector<ConfigSource>& sources);

}  // namespace vfready::model
