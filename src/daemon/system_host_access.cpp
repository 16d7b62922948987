// SPDX-License-Identifier: Apache-2.0
// vfreadyd's way to the host: sysfs under the configured root, calls into drivers in helper
// processes, netlink in the daemon's namespace, udev through the daemon's one reader.
#include <thread>

#include "host_access.hpp"
#include "pass_planner.hpp"
#include "vfready/host/helper_links.hpp"
#include "vfready/host/host_reader.hpp"
#include "vfready/host/link_name.hpp"
#include "vfready/host/links.hpp"
#include "vfready/host/sysfs.hpp"
#include "vfready/host/sysfs_sriov_calls.hpp"
#include "vfready/host/sysfs_sriov_reads.hpp"
#include "vfready/host/udev.hpp"
#include "vfready/model/checks.hpp"

namespace vfready::daemon {

namespace {

std::chrono::milliseconds device_call_bound(const model::Config& config) {
  return std::chrono::milliseconds(config.timeouts.device_call_ms);
}

// Required modules may still be loading when vfreadyd starts (openibd, rdma-hw.target, a
// driver container): waits for them, up to timeouts.modules_ms, unless the kernel log
// already shows one failed to load (it does not fit the kernel): then at once. sysfs has
// no event for a module's arrival, so this looks every 100 ms, in the planner's worker process.
void wait_for_modules(host::Sysfs& sysfs, const model::Config& config,
                      const std::string& kernel_log,
                      const std::function<void(std::string)>& waiting) {
  if (config.pfs.empty()) {
    return;  // nothing to bring up: no driver to wait for
  }
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(config.timeouts.modules_ms);
  bool announced = false;
  for (auto missing = host::missing_modules(sysfs, config.required_modules);
       !missing.empty() && std::chrono::steady_clock::now() < until;
       missing = host::missing_modules(sysfs, config.required_modules)) {
    if (model::load_failure_evidence(config.required_modules, missing,
                                     host::read_kernel_log(kernel_log))) {
      return;  // the driver check says what the log says
    }
    if (!announced) {
      std::string names;
      for (const auto& m : missing) {
        names += (names.empty() ? "" : ", ") + m;
      }
      waiting("Waiting up to " + std::to_string(config.timeouts.modules_ms) +
              " ms for modules to load: " + names);
      announced = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

class SystemPfHost final : public OwnedPfHost {
 public:
  SystemPfHost(const BringupInputs& in, host::UdevWait& udev)
      : sysfs_(in.roots.sysfs, in.calls, device_call_bound(in.config)),
        reads_(sysfs_, in.roots.kernel_log),
        calls_(sysfs_, {std::chrono::milliseconds(in.config.timeouts.numvfs_ms),
                        std::chrono::milliseconds(in.config.timeouts.bind_ms),
                        device_call_bound(in.config)}),
        links_(in.calls, device_call_bound(in.config)),
        os_{reads_, calls_, links_, udev} {}
  pipeline::PfHost& host() override { return os_; }

 private:
  host::RootedSysfs sysfs_;
  host::SysfsSriovReads reads_;
  host::SysfsSriovCalls calls_;
  host::HelperLinks links_;  // every link request in a helper, under rtnl_lock's key
  pipeline::PfHost os_;
};

// Link events of the daemon's namespace, the links' names, and sysfs read in the loop's
// thread (a netdev's device link and its PF's): nothing that waits on rtnl_lock or a
// device lock.
class SystemDriftReads final : public DriftReads {
 public:
  explicit SystemDriftReads(const BringupInputs& in) : sysfs_(in.roots.sysfs), reads_(sysfs_) {}
  host::LinkEvents& events() override { return monitor_; }
  std::optional<std::string> link_name(int ifindex) override { return host::link_name(ifindex); }
  std::optional<uint32_t> netdev_mtu(const std::string& name) override {
    return reads_.netdev_mtu(name);
  }
  host::NetdevDevice device_of_netdev(const std::string& name) override {
    return reads_.device_of_netdev(name);
  }

 private:
  host::LinkMonitor monitor_;  // first: nothing that changes after is missed
  host::RootedSysfs sysfs_;
  host::SysfsSriovReads reads_;
};

class SystemHostAccess final : public HostAccess {
 public:
  std::shared_ptr<host::UdevWait> listen(const BringupInputs& in) override {
    return std::make_shared<host::LibudevWait>(in.udev);
  }
  model::HostInfo read_host(const BringupInputs& in, const ReadProgress& progress) override {
    host::RootedSysfs sysfs(in.roots.sysfs, in.calls, device_call_bound(in.config));
    wait_for_modules(sysfs, in.config, in.roots.kernel_log, progress.waiting);
    const auto whole = model::selectable(in.config);
    // Each PF's pass reads its own port's state: a firmware holding that read holds up
    // its PF alone, not the plan of every PF.
    return host::read_host(sysfs, {in.roots.proc, in.roots.kernel_log}, &whole,
                           /*port_states=*/false, progress.read_one);
  }
  std::unique_ptr<OwnedPfHost> pf_host(const BringupInputs& in, host::UdevWait& udev) override {
    return std::make_unique<SystemPfHost>(in, udev);
  }
  std::vector<host::ReturnedCall> returned(const BringupInputs& in) override {
    return in.calls->collect();
  }
  int returns_fd(const BringupInputs& in) override { return in.calls->returns_fd(); }
  // Helpers hold copies of the daemon's pages as it was at their fork: none is kept idle
  // between passes (a drift repair spawns the few it needs).
  void pass_over(const BringupInputs& in) override { in.calls->close_idle(); }
  std::unique_ptr<DriftReads> drift_reads(const BringupInputs& in) override {
    return std::make_unique<SystemDriftReads>(in);
  }
};

}  // namespace

std::shared_ptr<HostAccess> system_host_access() { return std::make_shared<SystemHostAccess>(); }

}  // namespace vfready::daemon
