// SPDX-License-Identifier: Apache-2.0
// What vfreadyd prints for a person: the plan (--check-config).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "report_printer.hpp"
#include "vfready/host/host_reader.hpp"
#include "vfready/host/sysfs.hpp"
#include "vfready/model/checks.hpp"
#include "vfready/model/plan.hpp"
#include "vfready/model/printable.hpp"

namespace vfready::daemon {

namespace {

std::string join(const std::vector<model::AltName>& names) {
  std::string out;
  for (const auto& n : names) {
    out += (out.empty() ? "" : ",") + n.str();
  }
  return out.empty() ? "-" : out;
}

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

// The plan's text, as print_plan writes it (escaped when written).
int plan_text(const model::Config& config, const model::CompatTable& table, const HostRoots& roots,
              std::FILE* out, std::string& error);

}  // namespace

int print_plan(const model::Config& config, const model::CompatTable& table,
               const HostRoots& roots) {
  char* buf = nullptr;
  std::size_t len = 0;
  std::FILE* out = open_memstream(&buf, &len);
  if (out == nullptr) {
    static_cast<void>(std::fputs("vfreadyd: out of memory\n", stderr));
    return kCheckProblems;
  }
  std::string error;
  const int code = plan_text(config, table, roots, out, error);
  static_cast<void>(std::fclose(out));
  write_printable(stdout, std::string(buf, len));
  std::free(buf);  // NOLINT(cppcoreguidelines-no-malloc): open_memstream's buffer
  if (!error.empty()) {
    write_printable(stderr, "vfreadyd: " + error);
  }
  return code;
}

namespace {

int plan_text(const model::Config& config, const model::CompatTable& table, const HostRoots& roots,
              std::FILE* out, std::string& error) {
  // A PF whose driver holds its lock is read as stuck within the bound, not waited for.
  host::RootedSysfs sysfs(roots.sysfs, std::make_shared<host::DeviceCalls>(),
                          std::chrono::milliseconds(config.timeouts.device_call_ms));
  const auto host = host::read_host(sysfs, {roots.proc, roots.kernel_log});
  auto plan = model::make_plan(config, host);
  if (!plan) {
    error = plan.error().message;
    return kCheckProblems;
  }
  const auto driver = model::check_driver(config, table, host);
  bool problems_found = !driver.ok();
  static_cast<void>(std::fprintf(out, "driver: %s\n", driver.ok() ? "ok" : "FAILS"));
  for (const auto& f : driver.failures) {
    static_cast<void>(std::fprintf(out, "  problem: %s\n", f.text.c_str()));
  }
  for (const auto& w : driver.warnings) {
    static_cast<void>(std::fprintf(out, "  warning: %s\n", w.text.c_str()));
  }
  for (const auto& w : plan->warnings) {
    static_cast<void>(std::fprintf(out, "warning: %s\n", w.text.c_str()));
  }
  for (const auto& pf : plan->pfs) {
    const model::PfInfo* info = nullptr;
    for (const auto& f : host.functions) {
      info = f.pci == pf.pci ? &f : info;
    }
    const unsigned current = info != nullptr ? info->numvfs : 0U;
    static_cast<void>(
        std::fprintf(out, "PF %s %s -> %s: %u -> %u VFs (%s)\n", pf.pci.str().c_str(),
                     info != nullptr ? info->netdev.value_or("-").c_str() : "absent",
                     pf.name ? pf.name->str().c_str() : "(kernel name)", current, unsigned{pf.vfs},
                     current == pf.vfs ? "no sriov_numvfs write"
                     : current == 0    ? "writes sriov_drivers_autoprobe=0, sriov_numvfs"
                                    : "writes sriov_numvfs=0 then the count, if no VF is in use"));
    auto problems = pf.problems;
    if (info != nullptr && info->stuck) {
      problems.insert(problems.begin(),
                      model::problem(model::EventKind::kPfStuck,
                                     "PF " + pf.pci.str() + " is stuck: " + *info->stuck +
                                         " did not return within " +
                                         std::to_string(config.timeouts.device_call_ms) + " ms"));
    } else if (problems.empty()) {
      problems = model::check_hardware(pf, info, config, table, host).failures;
    }
    for (const auto& p : problems) {
      static_cast<void>(std::fprintf(out, "  problem: %s\n", p.text.c_str()));
    }
    problems_found = problems_found || !problems.empty();
    if (!pf.altnames.empty()) {
      static_cast<void>(std::fprintf(out, "  altnames %s\n", join(pf.altnames).c_str()));
    }
    for (const auto& vf : pf.vf) {
      static_cast<void>(std::fprintf(out, "  VF %-3u %s  name %-15s GUID %s  altnames %s%s\n",
                                     unsigned{vf.index}, vf.pci ? vf.pci->str().c_str() : "?",
                                     vf.name ? vf.name->str().c_str() : "-", vf.guid.str().c_str(),
                                     join(vf.altnames).c_str(),
                                     vf.mtu ? (" mtu " + std::to_string(*vf.mtu)).c_str() : ""));
    }
  }
  if (problems_found) {
    error = "the configuration does not fit this host: the plan has the problems above";
    return kCheckProblems;
  }
  return 0;
}

}  // namespace

}  // namespace vfready::daemon
