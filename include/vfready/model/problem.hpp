// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vfready/model/events.hpp"

// What keeps a PF, a VF or the whole bring-up from being ready (or, as a warning, what
// an operator should know). Its kind is its stable code, its journal MESSAGE_ID and
// its catalog entry.
namespace vfready::model {

struct Problem {
  EventKind kind = EventKind::kInternalError;
  std::string pf;      // PCI address of the PF concerned, "" for none
  std::string vf;      // PCI address of the VF concerned, "" for none
  std::string text;    // a complete sentence: what is wrong, where
  std::string remedy;  // what to do about it

  [[nodiscard]] std::string_view code() const { return event_info(kind).name; }
  friend bool operator==(const Problem&, const Problem&) = default;
};

// A problem of `kind` with the kind's remedy.
Problem problem(EventKind kind, std::string text, std::string pf = {}, std::string vf = {});

// The texts alone, in order (what the D-Bus and JSON "problems" lists carry).
std::vector<std::string> texts(const std::vector<Problem>& problems);
// Their codes (kind names), in order (D-Bus's ProblemCodes).
std::vector<std::string> codes(const std::vector<Problem>& problems);

}  // namespace vfready::model
