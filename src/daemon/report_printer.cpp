// SPDX-License-Identifier: Apache-2.0
// What vfreadyd prints without a pass: the plan (--check-config), a first configuration
// (--generate-config).
#include <cstdio>
#include <string>

#include "report_printer.hpp"
#include "vfready/host/device_calls.hpp"
#include "vfready/host/host_reader.hpp"
#include "vfready/host/sysfs.hpp"
#include "vfready/model/config_generator.hpp"
#include "vfready/model/plan.hpp"
#include "vfready/model/plan_report.hpp"
#include "vfready/model/printable.hpp"

namespace vfready::daemon {

namespace {

// Writes `text` line by line with each line made printable: names and messages carry
// what the host gave (a netdev may be named with escape sequences), and none reaches the
// terminal raw.
void write_printable(std::FILE* to, const std::string& text) {
  std::size_t from = 0;
  while (from < text.size()) {
    const auto end = text.find('\n', from);
    const auto line = text.substr(from, end == std::string::npos ? std::string::npos : end - from);
    static_cast<void>(std::fputs((model::printable(line) + "\n").c_str(), to));
    from = end == std::string::npos ? text.size() : end + 1;
  }
}

}  // namespace

int print_plan(const model::Config& config, const model::CompatTable& table, const HostRoots& roots,
               bool json) {
  // A PF whose driver holds its lock is read as stuck within the bound, not waited for.
  host::RootedSysfs sysfs(roots.sysfs, std::make_shared<host::DeviceCalls>(),
                          std::chrono::milliseconds(config.timeouts.device_call_ms));
  const auto whole = model::selectable(config);
  const auto host = host::read_host(sysfs, {roots.proc, roots.kernel_log}, &whole);
  auto plan = model::make_plan(config, host);
  if (!plan) {
    if (json) {
      static_cast<void>(
          std::fputs(model::plan_error_json(config.files, plan.error().message).c_str(), stdout));
    }
    write_printable(stderr, "vfreadyd: " + plan.error().message);
    return kCheckProblems;
  }
  const auto report = model::report_plan(plan.value(), host, config, table);
  if (json) {
    // Escaped by the JSON writer: no raw control byte of the host's names reaches stdout.
    static_cast<void>(std::fputs(model::plan_json(report).c_str(), stdout));
  } else {
    write_printable(stdout, model::plan_text(report));
  }
  if (!report.ok()) {
    write_printable(stderr,
                    "vfreadyd: the configuration does not fit this host: the plan has the "
                    "problems above");
    return kCheckProblems;
  }
  return 0;
}

int print_generated_config(const HostRoots& roots, const std::string& schema_path) {
  host::RootedSysfs sysfs(roots.sysfs, std::make_shared<host::DeviceCalls>(),
                          std::chrono::milliseconds(model::Timeouts{}.device_call_ms));
  const auto generated =
      model::generate_config(host::read_host(sysfs, {roots.proc, roots.kernel_log}), schema_path);
  static_cast<void>(std::fputs(generated.json.c_str(), stdout));
  std::string note =
      "vfreadyd: selected " + std::to_string(generated.selected.size()) + " SR-IOV PFs";
  for (const auto& pci : generated.selected) {
    note += (&pci == generated.selected.data() ? ": " : ", ") + pci;
  }
  for (const auto& why : generated.left_out) {
    note += "\nvfreadyd: left out " + why;
  }
  write_printable(stderr, note + "\nvfreadyd: check it with vfreadyd --check-config --config FILE");
  return generated.selected.empty() ? kCheckProblems : 0;
}

}  // namespace vfready::daemon
