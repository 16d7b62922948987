// SPDX-License-Identifier: Apache-2.0
// What SysfsSriovReads reads of PFs and VFs, of netdevs and drivers by name (class/net,
// bus/pci/drivers): attributes whose show functions take no device lock and no rtnl_lock.
#include "vfready/host/sysfs_sriov_reads.hpp"

#include <string>
#include <utility>

#include "attribute_reads.hpp"
#include "sysfs_sriov_parts.hpp"
#include "vfready/host/host_reader.hpp"

namespace vfready::host {

std::optional<model::PciAddress> SysfsSriovReads::vf_address(const model::PciAddress& pf,
                                                             uint16_t index) {
  return read_vf_address(sysfs_, pf_dir(pf), index);
}

bool SysfsSriovReads::has_ofed_sriov(const model::PciAddress& pf) {
  return sysfs_.exists(ofed_dir(pf, 0) + "port");
}

VfBinding SysfsSriovReads::vf_binding(const model::PciAddress& pf, uint16_t index) {
  const auto vf = read_vf_binding(sysfs_, pf_dir(pf), index);
  return {vf.netdev, vf.driver, vf.ifindex};
}

std::optional<model::Guid> SysfsSriovReads::vf_port_guid(const model::PciAddress& pf,
                                                         uint16_t index, bool ofed) {
  return read_vf_port_guid(sysfs_, pf, index, ofed);
}

std::optional<std::string> SysfsSriovReads::netdev_of(const model::PciAddress& function) {
  return netdev_under(sysfs_, function);
}

bool SysfsSriovReads::driverless(const model::PciAddress& function) {
  const auto dir = pf_dir(function);
  return sysfs_.exists(dir + "vendor") && !sysfs_.exists(dir + "driver");
}

std::vector<std::string> SysfsSriovReads::kernel_log_naming(const std::string& device) {
  auto lines = read_kernel_log(kernel_log_);
  std::erase_if(lines,
                [&](const std::string& line) { return line.find(device) == std::string::npos; });
  return lines;
}

NetdevDevice SysfsSriovReads::device_of_netdev(const std::string& netdev) {
  const auto device = "class/net/" + netdev + "/device";
  auto pci = sysfs_.link_target_name(device);
  if (!pci) {
    return {};  // a virtual device (veth, bridge)
  }
  return {std::move(pci), sysfs_.link_target_name(device + "/physfn")};
}

std::optional<model::Mac> SysfsSriovReads::netdev_mac(const std::string& name) {
  // address_show() takes no device lock and no rtnl_lock (net/core/net-sysfs.c).
  return mac(sysfs_, "class/net/" + name + "/address");
}

std::optional<uint32_t> SysfsSriovReads::netdev_mtu(const std::string& name) {
  // mtu_show() reads under RCU (netdev_show(), net/core/net-sysfs.c): no rtnl_lock.
  return number<uint32_t>(sysfs_, "class/net/" + name + "/mtu");
}

bool SysfsSriovReads::netdev_mac_random(const std::string& name) {
  constexpr int kNetAddrRandom = 1;  // include/uapi/linux/netdevice.h
  return number<int>(sysfs_, "class/net/" + name + "/addr_assign_type") == kNetAddrRandom;
}

bool SysfsSriovReads::driver_loaded(const std::string& name) {
  return pci_driver_registered(sysfs_, name);
}

}  // namespace vfready::host
