// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "vfready/model/guid.hpp"
#include "vfready/model/pci_address.hpp"
#include "vfready/model/result.hpp"

// The fake host's input: a machine described as in docs/topology.md.
namespace vfready::fakehost {

struct PortSpec {
  std::string link_layer = "InfiniBand";
  std::string state = "4: ACTIVE";
  std::string phys_state = "5: LinkUp";
  uint32_t lid = 0;
};

struct InfinibandSpec {
  std::string name;  // mlx5_N
  std::string fw_ver;
  model::Guid node_guid{0};
  bool ofed_sriov_sysfs = false;
  std::vector<PortSpec> ports;
};

struct SriovSpec {
  uint16_t totalvfs = 0;
  std::string vf_device;
  uint16_t first_vf_offset = 1;
  uint16_t vf_stride = 1;
  uint32_t vf_probe_ms = 0;
};

struct FaultSpec {
  std::set<uint16_t> probe_fail_vfs;
  std::set<uint16_t> probe_hang_vfs;  // the probe blocks, as numvfs_write_hangs
  // The first probe's netdev is gone before udev handled it; udev's add comes late.
  std::set<uint16_t> netdev_gone_vfs;
  std::set<uint16_t> guid_write_fail_vfs;  // OFED's sriov/N/node write fails with EIO
  std::set<uint16_t> guid_write_hang_vfs;  // it blocks, as numvfs_write_hangs
  // Reads of OFED's sriov/N/port (a firmware command for the VF's GID 0) fail with EIO,
  // or block as numvfs_write_hangs.
  std::set<uint16_t> port_read_fail_vfs;
  std::set<uint16_t> port_read_hang_vfs;
  bool numvfs_write_hangs = false;
  int numvfs_errno = 0;  // 0: none
  // Reads of the PF's IB ports' state and phys_state: they block, as numvfs_write_hangs
  // (a firmware command that does not complete), or fail with this errno (0: none).
  bool port_state_hangs = false;
  int port_state_errno = 0;
};

struct FunctionSpec {
  model::PciAddress pci;
  std::string vendor;
  std::string device;
  std::optional<std::string> driver{};
  int numa_node = -1;
  std::optional<std::string> netdev{};
  // The name of the PCI hotplug slot the function sits in (/sys/bus/pci/slots/<slot>), as
  // udev's slot names use it; nullopt when the platform reports none.
  std::optional<std::string> slot{};
  std::optional<SriovSpec> sriov{};
  std::optional<InfinibandSpec> infiniband{};
  FaultSpec faults{};

  // The PCI address of VF `index` (First VF Offset + index * VF Stride).
  [[nodiscard]] Result<model::PciAddress> vf_address(uint16_t index) const;
};

// How udevd names a netdev the kernel has just made (its rules' NamePolicy=).
enum class NamePolicy {
  kPath,  // the path name, as 99-default.link gives where no firmware or slot name is
  kSlot,  // the slot name where the function has a slot, else the path name
  kKeep,  // the kernel's name stays; the predictable names become altnames
  kNone,  // no rule names it: the kernel's name, no altnames
};

struct Topology {
  std::string name;
  std::string kernel_release;
  // The kernel takes the global PCI rescan lock around a driver's sriov_configure (newer
  // kernels): sriov_numvfs writes of different PFs run one after another.
  bool serializes_sriov_configure = false;
  std::map<std::string, std::optional<std::string>> modules;  // loaded; version if known
  // Modules that a driver loader is still loading: absent until the fake host gets
  // SIGUSR1 (the loader finishes).
  std::set<std::string> late_modules;
  std::vector<std::string> kernel_log;
  uint32_t udev_init_latency_ms = 0;
  // How long udevd's worker takes from writing a netdev's database with ID_RENAMING=1 to
  // its rename (a worker descheduled there: 18 ms seen in the VM, under load).
  uint32_t udev_renaming_ms = 0;
  // False: udevd initializes netdevs (its database) but its add messages reach no
  // monitor, as when they were lost.
  bool udev_announces = true;
  // True: udevd is not running (no run/udev/control) until the fake host gets SIGUSR1.
  bool udev_starts_on_signal = false;
  NamePolicy udev_name_policy = NamePolicy::kPath;
  std::vector<FunctionSpec> functions;
};

// Parses topology JSON. Errors name `source` (the file), the JSON path and what is
// valid. Unknown keys are errors, so a misspelt fault is not silently ignored.
Result<Topology> parse_topology(const std::string& json_text, const std::string& source);
Result<Topology> load_topology(const std::string& path);

// errno value for a name such as "EIO"; nullopt for names the fake host does not know.
std::optional<int> errno_from_name(const std::string& name);

}  // namespace vfready::fakehost
