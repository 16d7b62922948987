// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vfready/model/guid.hpp"
#include "vfready/model/inventory.hpp"
#include "vfready/model/mac.hpp"
#include "vfready/model/pci_address.hpp"

// What a bring-up reads of a PF and its VFs, in the pipeline's words: no caller builds a
// path or picks a file. None of these waits on a device lock for long: reads of what a
// driver's call locks (sriov_numvfs) are device calls, and answer nothing while the PF
// is stuck.
namespace vfready::host {

// A VF's binding as udev and naming need it: its netdev in this namespace, or, without
// one, the driver that holds it (none: unbound).
struct VfBinding {
  std::optional<std::string> netdev;
  std::optional<std::string> driver;
  // The netdev's, read from sysfs beside its name (net/<name>/ifindex, which the kernel
  // serves without rtnl_lock); 0 when it was renamed or gone between the two reads.
  int ifindex = 0;
};

// The PCI function behind a netdev, and its PF when that function is a VF.
struct NetdevDevice {
  std::optional<std::string> pci;
  std::optional<std::string> physfn;
};

class SriovReads {
 public:
  virtual ~SriovReads() = default;
  // Where VF `index` is on PCI; nullopt when the PF has no such VF.
  virtual std::optional<model::PciAddress> vf_address(const model::PciAddress& pf,
                                                      uint16_t index) = 0;
  // Whether OFED's per-VF GUID files (sriov/<n>/{node,port,policy}) are there.
  virtual bool has_ofed_sriov(const model::PciAddress& pf) = 0;
  virtual VfBinding vf_binding(const model::PciAddress& pf, uint16_t index) = 0;
  // The GUID VF `index`'s port uses, read back from the host: OFED's sriov/<n>/port when
  // `ofed` says the PF has those files (PfInfo::ofed_sriov) and it is there, or else the
  // VF's RDMA device (port 1's GID 0); nullopt when neither can tell.
  virtual std::optional<model::Guid> vf_port_guid(const model::PciAddress& pf, uint16_t index,
                                                  bool ofed) = 0;
  // The netdev of a PCI function (a PF's), nullopt when it has none.
  virtual std::optional<std::string> netdev_of(const model::PciAddress& function) = 0;
  // The PCI function a netdev belongs to, and its PF.
  virtual NetdevDevice device_of_netdev(const std::string& netdev) = 0;
  // The kernel log's lines that name `device` (a PCI address), oldest first.
  virtual std::vector<std::string> kernel_log_naming(const std::string& device) = 0;
  // Whether the driver `name` is loaded (its module, or a built-in driver on the PCI
  // bus). A host that cannot tell says it is.
  virtual bool driver_loaded(const std::string& /*name*/) { return true; }
  // The address of netdev `name` (class/net/<name>/address), where it is a MAC: what a
  // link as the namer renamed it without a lookup does not carry.
  virtual std::optional<model::Mac> netdev_mac(const std::string& /*name*/) { return std::nullopt; }
  // Whether netdev `name`'s driver made its address up (addr_assign_type 1,
  // NET_ADDR_RANDOM): a VF driver that could not get its MAC from the PF at probe.
  virtual bool netdev_mac_random(const std::string& /*name*/) { return false; }
  // The MTU netdev `name` has (class/net/<name>/mtu): what IPoIB made of the one it was
  // given, which the namer's answer does not say. nullopt where the host cannot tell.
  virtual std::optional<uint32_t> netdev_mtu(const std::string& /*name*/) { return std::nullopt; }
  // Whether PCI function `function` is there now with no driver bound (its `driver`
  // link, which the kernel makes and removes as it binds and unbinds: no call into a
  // driver). False for one that is gone.
  virtual bool driverless(const model::PciAddress& /*function*/) { return false; }
};

}  // namespace vfready::host
