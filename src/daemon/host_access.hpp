// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vfready/host/links.hpp"
#include "vfready/host/sriov_reads.hpp"
#include "vfready/host/stuck_call.hpp"
#include "vfready/host/udev_wait.hpp"
#include "vfready/model/config.hpp"
#include "vfready/model/inventory.hpp"
#include "vfready/pipeline/pf_host.hpp"

// How the daemon reaches the host: HostAccess makes what each part works through, anew
// for each pass: a PF's pass a pipeline::PfHost (owned by an OwnedPfHost), the drift
// watch its DriftReads, the host's reader what it reads. vfreadyd's
// (system_host_access()) is sysfs with its device calls in helpers, netlink and libudev;
// unit tests give one over MemoryHost, so that a whole pass runs without root.
namespace vfready::daemon {

struct BringupInputs;

// What one PF's pass works through (host()), owning what it is made of.
class OwnedPfHost {
 public:
  virtual ~OwnedPfHost() = default;
  virtual pipeline::PfHost& host() = 0;
};

// What the drift watch reads the host through: its link events, its links as they are
// now, and sysfs for a netdev's MTU and the device under it. Nothing that takes a
// driver's lock: the watch reads on the loop.
class DriftReads {
 public:
  virtual ~DriftReads() = default;
  virtual host::LinkEvents& events() = 0;
  // The name link `ifindex` has now; nullopt when it is gone (host::link_name).
  virtual std::optional<std::string> link_name(int ifindex) = 0;
  // The MTU of netdev `name`, as sysfs has it; nullopt when it cannot be read.
  virtual std::optional<uint32_t> netdev_mtu(const std::string& name) = 0;
  // The device under netdev `name` and its PF, from sysfs links (no driver's lock).
  virtual host::NetdevDevice device_of_netdev(const std::string& name) = 0;
};

// The daemon's way to the host, for its passes, its drift watch and its stuck calls.
class HostAccess {
 public:
  virtual ~HostAccess() = default;
  // Listening to udev for the pass's netdevs: made before anything is read, so that no
  // netdev's event is missed. Throws when it cannot listen.
  virtual std::shared_ptr<host::UdevWait> listen(const BringupInputs& in) = 0;
  // What the host's read tells as it goes: once what it waits for (`waiting`), and each
  // function it has read (`read_one`, from its reading threads at once).
  struct ReadProgress {
    std::function<void(std::string)> waiting;
    std::function<void()> read_one;
  };
  // Waits (bounded by the config) for the required modules to load. Then the host as the
  // plan needs it.
  virtual model::HostInfo read_host(const BringupInputs& in, const ReadProgress& progress) = 0;
  // What one PF's pass works through, its udev waits going to `udev` (the pass's).
  virtual std::unique_ptr<OwnedPfHost> pf_host(const BringupInputs& in, host::UdevWait& udev) = 0;
  // The calls into drivers that were stuck and have since returned (their PFs may be
  // brought up again), each once.
  virtual std::vector<host::ReturnedCall> returned(const BringupInputs& in) = 0;
  // Readable while returned() has something to tell (host::DeviceCalls::returns_fd());
  // -1 when there is no such descriptor.
  virtual int returns_fd(const BringupInputs& in) = 0;
  // A pass is over: what is kept only for passes (idle helpers) may go.
  virtual void pass_over(const BringupInputs& in) = 0;
  // For the daemon's drift watch, opened before the first pass reads anything. Throws
  // std::runtime_error when link events cannot be had.
  virtual std::unique_ptr<DriftReads> drift_reads(const BringupInputs& in) = 0;
};

// vfreadyd's: sysfs under in.roots, device calls through in.calls, netlink in the
// daemon's namespace, udev through in.udev.
std::shared_ptr<HostAccess> system_host_access();

}  // namespace vfready::daemon
