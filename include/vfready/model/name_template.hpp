// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "vfready/model/result.hpp"

namespace vfready::model {

// A name template such as "ib{pf_index}v{vf}". Fields are known at parse time, so a
// misspelt field is an error when the config loads, not a strange name at boot.
class NameTemplate {
 public:
  // The fields a template may use.
  static const std::vector<std::string>& known_fields();

  static Result<NameTemplate> parse(std::string_view text);

  // Every field used must be in `values` (checked by the caller against the template's
  // context: PF templates have no {vf}).
  [[nodiscard]] std::string render(const std::map<std::string, std::string>& values) const;
  [[nodiscard]] bool uses(std::string_view field) const;
  [[nodiscard]] const std::string& text() const { return text_; }

 private:
  struct Field {
    std::string name;
  };
  std::vector<std::variant<std::string, Field>> parts_;
  std::string text_;
};

}  // namespace vfready::model
