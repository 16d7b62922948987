// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/if_name.hpp"

#include <optional>

#include "text.hpp"

namespace vfready::model {

namespace {

// What the kernel takes as a name, and keeps as given, with `max` bytes allowed; nullopt
// when valid. dev_valid_name() (net/core/dev.c) refuses an empty name, one of IFNAMSIZ
// bytes or more, "." and "..", and any '/', ':' or isspace() byte, where the kernel's
// isspace() is Latin-1 (lib/ctype.c): \t \n \v \f \r, space and 0xA0 (so UTF-8 such as
// a no-break space or "\xc3\xa0" is refused too). dev_get_valid_name() takes a name with
// '%' as a pattern and allocates a number for it (dev_alloc_name()): the netdev would
// get a name vfready never asked for. vfready takes printable ASCII only, without '/',
// ':' and '%': every name it accepts is one the kernel keeps as it is, and prints as it is.
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
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte >= 0x7f) {
      return "it contains " + text::quote(std::string_view(&c, 1)) +
             " (only printable ASCII: the kernel refuses whitespace, which for it includes the "
             "byte 0xA0 inside UTF-8 characters, and control bytes cannot be shown)";
    }
    if (c == '/' || c == ':') {
      return "it contains " + text::quote(std::string_view(&c, 1)) +
             " (the kernel refuses '/' and ':')";
    }
    if (c == '%') {
      return "it contains '%' (the kernel takes a name with %d as a pattern and gives the "
             "netdev a number of its own choosing)";
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
