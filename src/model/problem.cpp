// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/problem.hpp"

namespace vfready::model {

Problem problem(EventKind kind, std::string text, std::string pf, std::string vf) {
  return {kind, std::move(pf), std::move(vf), std::move(text),
          std::string(event_info(kind).remedy)};
}

std::vector<std::string> texts(const std::vector<Problem>& problems) {
  std::vector<std::string> out;
  out.reserve(problems.size());
  for (const auto& p : problems) {
    out.push_back(p.text);
  }
  return out;
}

std::vector<std::string> codes(const std::vector<Problem>& problems) {
  std::vector<std::string> out;
  out.reserve(problems.size());
  for (const auto& p : problems) {
    out.emplace_back(p.code());
  }
  return out;
}

}  // namespace vfready::model
