// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/if_name.hpp"

#include <optional>

#include "text.hpp"

namespace vfready::model {

namespace {

// The kernel's dev_valid_name() rules, with `max` bytes allowed; nullopt when valid.
std::optional<std::string> why_invalid(std::string_view name, std::size_t max) {
  if (name.empty()) {
    return "it is empty";
  }
  if (name.size() > max) {
    return "it is " + std::to_string(name.size()) + " bytes, at most " + std::to_string(max) +
           " are allowed";
  }
  if (name == "." || name == "..") {
    return R"("." and ".." are reserved)";
  }
  for (char c : name) {
    // The kernel's isspace(): space, \t \n \v \f \r.
    if (c == '/' || c == ':' || c == ' ' || (c >= '\t' && c <= '\r') || c == '\0') {
      return "it contains " + text::quote(std::string_view(&c, 1)) +
             " ('/', ':', NUL and whitespace are not allowed)";
    }
  }
  return std::nullopt;
}

}  // namespace

Result<IfName> IfName::parse(std::string_view text) {
  if (auto why = why_invalid(text, kMaxLength)) {
    return Error{"invalid interface name " + text::quote(text) + ": " + *why};
  }
  return IfName(std::string(text));
}

Result<AltName> AltName::parse(std::string_view text) {
  if (auto why = why_invalid(text, kMaxLength)) {
    return Error{"invalid alternative interface name " + text::quote(text) + ": " + *why};
  }
  return AltName(std::string(text));
}

}  // namespace vfready::model
