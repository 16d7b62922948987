// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vfready/model/guid.hpp"
#include "vfready/model/mac.hpp"
#include "vfready/model/pci_address.hpp"
#include "vfready/model/version.hpp"

// What the host looks like, as read from sysfs, /proc and the kernel log: pure data,
// read fresh rather than remembered, so a restarted daemon converges from what it finds.
namespace vfready::model {

struct PortInfo {
  std::string link_layer;  // "InfiniBand", "Ethernet", "Unknown"
  std::string state;       // "4: ACTIVE"
  std::string phys_state;  // "5: LinkUp"
  // Why its state could not be read (the driver could not query the port: "Input/output
  // error (EIO)"), empty when it was; the state is then "".
  std::string state_error{};
  // Its state was not read: the daemon's host read leaves port 1's to the PF's own pass
  // (step "hardware"), so that a firmware holding the read holds that PF alone.
  bool state_unread = false;
};

// Whether a port state as sysfs gives it ("4: ACTIVE") is ACTIVE.
inline bool port_active(const std::string& state) {
  return state.find("ACTIVE") != std::string::npos;
}

struct VfInfo {
  uint16_t index = 0;
  PciAddress pci = PciAddress::from_parts(0, 0, 0, 0);
  std::optional<std::string> driver;  // bound driver
  std::optional<std::string> netdev;  // name in the daemon's namespace (sysfs net/)
  int ifindex = 0;
  std::optional<Guid> node_guid;       // OFED sriov/<vf>/node (configured)
  std::optional<Guid> effective_guid;  // OFED sriov/<vf>/port: the GUID in use
  std::optional<Mac> mac;              // its netdev's address, where it has one here
};

struct PfInfo {
  PciAddress pci = PciAddress::from_parts(0, 0, 0, 0);
  uint16_t vendor = 0;
  uint16_t device = 0;
  uint16_t vf_device = 0;  // sriov_vf_device: its VFs' PCI device ID
  std::optional<std::string> driver;
  // The driver that takes its VFs: the module modules.alias names for the VFs' PCI IDs
  // (vendor, sriov_vf_device), else the PF's own driver (mlx5_core drives both); "" when
  // neither is known.
  std::string vf_driver;
  bool vf_driver_loaded = false;  // /sys/module/<vf_driver> (or its driver in /sys/bus/pci)
  int numa_node = -1;
  std::optional<std::string> netdev;
  int ifindex = 0;
  int netdev_type = 0;  // ARPHRD_*: 1 Ethernet, 32 InfiniBand (net/<netdev>/type), 0 unknown
  // Its netdev's address when it is the burned-in one (addr_assign_type 0,
  // NET_ADDR_PERM): what the derived MAC scheme derives from.
  std::optional<Mac> permanent_mac;
  bool sriov = false;
  uint16_t totalvfs = 0;
  uint16_t numvfs = 0;
  uint16_t first_vf_offset = 1;
  uint16_t vf_stride = 1;
  bool autoprobe = true;
  std::optional<std::string> ib_device;  // its RDMA device: mlx5_N, rxe0
  // That device is a software one over its netdev (rdma_rxe, siw), made by an operator,
  // not by the NIC's driver: its VFs get none as they probe.
  bool rdma_over_netdev = false;
  std::optional<Version> firmware;
  std::optional<std::string> firmware_text;  // fw_ver as read, parsed or not
  std::optional<Guid> node_guid;
  bool ofed_sriov = false;  // device/sriov/<vf>/{node,port,policy} exist
  std::vector<PortInfo> ports;
  std::vector<VfInfo> vfs;  // virtfn0..numvfs-1 as found
  // The call into its driver that has not returned (sriov_numvfs could not be read):
  // nothing else of it can be trusted or changed until it does.
  std::optional<std::string> stuck;

  // Where VF `index` is (or will be) on PCI.
  [[nodiscard]] std::optional<PciAddress> vf_address(uint16_t index) const {
    auto a = PciAddress::from_routing_id(
        pci.domain(), pci.routing_id() + first_vf_offset + uint32_t{index} * vf_stride);
    return a ? std::optional<PciAddress>(a.value()) : std::nullopt;
  }

  // Ports' link layer as one word (the first port's); without an RDMA device, its
  // netdev's type (a NIC with no RDMA is Ethernet); "" when unknown.
  [[nodiscard]] std::string link_layer() const {
    if (!ports.empty()) {
      return ports.front().link_layer;
    }
    constexpr int kEther = 1;        // ARPHRD_ETHER
    constexpr int kInfiniBand = 32;  // ARPHRD_INFINIBAND
    return netdev_type == kEther ? "Ethernet" : netdev_type == kInfiniBand ? "InfiniBand" : "";
  }

  // The driver its VFs are probed and judged by: vf_driver, or mlx5_core where a PF was
  // read without it (the hardware check fails a PF of another driver with none).
  [[nodiscard]] std::string vfs_driver() const {
    return vf_driver.empty() ? std::string("mlx5_core") : vf_driver;
  }

  // Whether mlx5_core drives it: the firmware, OFED and mlxconfig checks and remedies
  // are its.
  [[nodiscard]] bool mlx5() const { return driver == "mlx5_core" || (!driver && vendor == 0x15b3); }
};

struct HostInfo {
  std::string kernel_release;
  std::map<std::string, std::optional<std::string>> modules;  // loaded; version if any
  std::vector<std::string> kernel_log;                        // message text, one per record
  std::vector<PfInfo> functions;  // physical functions of interest, in PCI order

  [[nodiscard]] const PfInfo* find(const PciAddress& pci) const {
    for (const auto& f : functions) {
      if (f.pci == pci) {
        return &f;
      }
    }
    return nullptr;
  }
};

}  // namespace vfready::model
