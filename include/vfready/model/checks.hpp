// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vfready/model/compat_table.hpp"
#include "vfready/model/config.hpp"
#include "vfready/model/events.hpp"
#include "vfready/model/inventory.hpp"
#include "vfready/model/pci_address.hpp"
#include "vfready/model/plan.hpp"
#include "vfready/model/problem.hpp"

// The checks that run before anything is written: is the driver usable, and is each
// PF's hardware as configured. Pure: they judge what was read.
namespace vfready::model {

// A kernel log line about an mlx5/InfiniBand module that matters.
struct KernelLogProblem {
  // kUnknownSymbol: the module does not fit the kernel (unknown symbol, symbol version);
  // kProbeFailed: a function's probe failed; kDeviceError: another failure naming one.
  enum class Kind { kUnknownSymbol, kProbeFailed, kDeviceError };
  Kind kind = Kind::kUnknownSymbol;
  std::string module;
  std::string symbol;             // kUnknownSymbol
  std::optional<PciAddress> pci;  // the function the line names
  int error = 0;
  std::string line;
};

// Lines of mlx5_*, ib_* and rdma_* modules: "<module>: Unknown symbol <sym> (err N)",
// "<module>: disagrees about version of symbol <sym>", and lines naming a PCI function
// ("<module> <pci>: ..." or "probe of <pci>") that say a probe failed, or another
// failure (fatal, failed, timeout, health compromised). Raw /dev/kmsg records or bare
// text; never throws, whatever the text.
std::vector<KernelLogProblem> scan_kernel_log(const std::vector<std::string>& lines);

// The kernel log line that already shows one of the `missing` modules failed to load
// (an unknown symbol or a symbol version it disagrees about: it does not fit the kernel)
// or failed its probe, or any of the `required` ones does not fit the kernel (the modules
// that need it never load, and the driver check fails on it): no wait can end well.
// nullopt when there is none.
std::optional<std::string> load_failure_evidence(const std::vector<std::string>& required,
                                                 const std::vector<std::string>& missing,
                                                 const std::vector<std::string>& kernel_log);

struct Verdict {
  std::vector<Problem> failures;  // each names the module/PF, what is wrong, the remedy
  std::vector<Problem> warnings;
  [[nodiscard]] bool ok() const { return failures.empty(); }
};

// Required modules loaded, their versions against the table for this kernel, and the
// kernel log. A failure stops the whole bring-up before any write. A configuration with
// no PF entry passes: nothing it does needs the driver.
Verdict check_driver(const Config& config, const CompatTable& table, const HostInfo& host);

// The kernel log's problem lines (scan_kernel_log) that name `target` or one of its VFs
// (by the plan's addresses and the host's), each as a problem of that PF quoting the
// line (the latest ten): what the status shows of the PF when a check before it stopped
// the pass.
std::vector<Problem> log_lines_of_pf(const PfTarget& target, const HostInfo& host);

// The probes the kernel log shows a `required` module failing on functions that are not
// among `targets` or their VFs, each by its PCI address (the latest ten): with the
// driver check failed, the rest of what the driver's trouble looks like on this node.
std::vector<Problem> failed_probes_elsewhere(const std::vector<std::string>& required,
                                             const std::vector<PfTarget>& targets,
                                             const HostInfo& host);

// One PF: present, driver bound, not failed to probe, firmware at or above its device's
// minimum, link layer as configured, SR-IOV with enough VFs.
Verdict check_hardware(const PfTarget& target, const PfInfo* info, const Config& config,
                       const CompatTable& table, const HostInfo& host);

}  // namespace vfready::model
