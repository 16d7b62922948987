// SPDX-License-Identifier: Apache-2.0
// The status JSON from any text the host or a user gives (netdev names may be any
// bytes): it always parses, and text that is valid UTF-8 reads back as it was.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "vfready/model/status.hpp"
#include "vfready/model/status_json.hpp"

namespace {

// The input's parts between NUL bytes, at least one.
std::vector<std::string> parts(std::string_view data) {
  std::vector<std::string> out(1);
  for (const char c : data) {
    if (c == '\0') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

bool valid_utf8(const std::string& s) {
  try {
    static_cast<void>(nlohmann::json(s).dump());
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

void expect_same(const nlohmann::json& read, const std::string& written) {
  if (written.empty() || !valid_utf8(written)) {
    return;  // "" is null; bytes that are not UTF-8 come back as U+FFFD
  }
  if (!read.is_string() || read.get<std::string>() != written) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const auto text = parts(std::string_view(reinterpret_cast<const char*>(data), size));
  const auto at = [&](std::size_t i) -> const std::string& { return text[i % text.size()]; };
  using namespace vfready::model;
  DaemonStatus status;
  status.text = at(0);
  PfStatus pf;
  pf.pci = PciAddress::from_parts(0, 0x18, 0, 0);
  pf.name = at(1);
  pf.port_state = at(2);
  pf.problems.push_back(problem(EventKind::kNameConflict, at(3), "0000:18:00.0"));
  VfStatus vf;
  vf.pci = PciAddress::from_parts(0, 0x18, 0, 1);
  vf.name = at(4);
  vf.altnames = {at(5), at(6)};
  vf.in_use = {VfUse::Why::kOtherDriver, at(7)};
  pf.vfs.push_back(vf);
  status.pfs.push_back(pf);
  status.recent_events.push_back({12.0, "0000:18:00.0", at(8), at(9)});
  const auto j = nlohmann::json::parse(status_file_text(status, 1));  // throws: a crash
  expect_same(j["status"], at(0));
  expect_same(j["pfs"][0]["name"], at(1));
  expect_same(j["pfs"][0]["problems"][0], at(3));
  expect_same(j["pfs"][0]["vfs"][0]["name"], at(4));
  expect_same(j["pfs"][0]["vfs"][0]["altnames"][1], at(6));
  expect_same(j["recent_events"][0]["message"], at(9));
  return 0;
}
