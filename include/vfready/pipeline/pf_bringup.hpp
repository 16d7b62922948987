// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "vfready/host/links.hpp"
#include "vfready/host/sysfs.hpp"
#include "vfready/host/udev_wait.hpp"
#include "vfready/model/checks.hpp"
#include "vfready/model/compat_table.hpp"
#include "vfready/model/config.hpp"
#include "vfready/model/inventory.hpp"
#include "vfready/model/plan.hpp"
#include "vfready/model/status.hpp"

// Bringing one PF to its target: hardware check, VF count, GUIDs set before the VFs
// are probed, udev, names, validation. Every step first looks at what is there and
// does only what is missing, so a second run (or a run after a crash) writes nothing
// that is already right. A VF that is probed goes through udev, naming and its
// read-back as soon as its probe ends, while the next VF probes: a PF's probes are its
// critical path. Runs on a worker thread: sysfs writes block.
namespace vfready::pipeline {

// The OS as one PF's bring-up sees it.
struct PfHost {
  host::Sysfs& sysfs;
  host::Links& links;
  host::UdevWait& udev;
};

// Interface names are node-wide: the naming steps of all PFs take turns through this,
// which also knows every netdev vfready manages (so a name held by one of ours can be
// moved aside, and one held by anything else is never taken).
class NameRegistry {
 public:
  // The configured PFs (PCI addresses): netdevs of these and of their VFs are ours.
  explicit NameRegistry(std::set<std::string> pfs = {}) : pfs_(std::move(pfs)) {}
  // Before any worker uses it.
  void configure(std::set<std::string> pfs) { pfs_ = std::move(pfs); }
  std::mutex& mutex() { return mu_; }
  void manage(int ifindex) { managed_.insert(ifindex); }
  [[nodiscard]] bool managed(int ifindex) const { return managed_.contains(ifindex); }
  [[nodiscard]] bool is_configured_pf(const std::string& pci) const { return pfs_.contains(pci); }

 private:
  std::mutex mu_;
  std::set<int> managed_;
  std::set<std::string> pfs_;
};

struct StepNames {
  static constexpr const char* kHardware = "hardware";
  static constexpr const char* kVfs = "vfs";
  static constexpr const char* kGuids = "guids";
  static constexpr const char* kUdev = "udev";
  static constexpr const char* kNames = "names";
  static constexpr const char* kValidate = "validate";
};

// Called as each step starts (from the worker thread).
using ProgressFn = std::function<void(const char* step)>;

model::PfStatus bring_up_pf(const model::PfTarget& target, const model::Config& config,
                            const model::CompatTable& table, const model::HostInfo& host,
                            PfHost& os, NameRegistry& names, const ProgressFn& progress);

// Internal steps, exposed for their unit tests.
namespace detail {
// Makes sriov_numvfs equal the target; false (with problems in `status`) when it cannot.
bool ensure_vf_count(const model::PfTarget& target, const model::PfInfo& info, host::Sysfs& sysfs,
                     model::PfStatus& status, bool* autoprobe_changed);
// Adds every VF to `status.vfs` and sets the GUID of each that needs it (unbinding a
// bound VF whose GUID is wrong, unless it is in use); each VF that needs a probe is
// handed to `to_probe` (its index in `status.vfs`, its address) as soon as its GUID is set.
using ToProbeFn = std::function<void(std::size_t at, const model::PciAddress& vf)>;
void assign_guids(const model::PfTarget& target, const model::PfInfo& info, PfHost& os,
                  model::PfStatus& status, const ToProbeFn& to_probe);
// Probes (binds) one VF through drivers_probe; what went wrong, in words.
std::optional<std::string> probe_vf(host::Sysfs& sysfs, const model::PciAddress& vf);
// For a VF whose probe did not take its GUID (a bind by someone else won a race with
// this pass's): its GUID through OFED's sysfs again, unbind, probe. What went wrong.
std::optional<std::string> reprobe_with_guid(const model::PfTarget& target, PfHost& os,
                                             uint16_t index, const model::PciAddress& vf);
// Gives the PF's netdev its name, altnames and MTU.
void name_pf(const model::PfTarget& target, PfHost& os, NameRegistry& names,
             model::PfStatus& status);
// Gives one VF's netdev (vs.ifindex) its name, altnames and MTU.
void name_vf(const model::PfTarget& target, PfHost& os, NameRegistry& names, model::VfStatus& vs,
             std::map<std::string, model::EventKind>& events);
}  // namespace detail

}  // namespace vfready::pipeline
