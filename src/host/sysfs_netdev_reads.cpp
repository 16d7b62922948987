// SPDX-License-Identifier: Apache-2.0
// What SysfsSriovHost reads of netdevs and drivers by name (class/net, bus/pci/drivers):
// attributes whose show functions take no device lock and no rtnl_lock.
#include "vfready/host/sysfs_sriov_host.hpp"

#include <string>
#include <utility>

#include "attribute_reads.hpp"

namespace vfready::host {

NetdevDevice SysfsSriovHost::device_of_netdev(const std::string& netdev) {
  const auto device = "class/net/" + netdev + "/device";
  auto pci = sysfs_.link_target_name(device);
  if (!pci) {
    return {};  // a virtual device (veth, bridge)
  }
  return {std::move(pci), sysfs_.link_target_name(device + "/physfn")};
}

std::optional<model::Mac> SysfsSriovHost::netdev_mac(const std::string& name) {
  // address_show() takes no device lock and no rtnl_lock (net/core/net-sysfs.c).
  return mac(sysfs_, "class/net/" + name + "/address");
}

std::optional<uint32_t> SysfsSriovHost::netdev_mtu(const std::string& name) {
  // mtu_show() reads under RCU (netdev_show(), net/core/net-sysfs.c): no rtnl_lock.
  return number<uint32_t>(sysfs_, "class/net/" + name + "/mtu");
}

bool SysfsSriovHost::netdev_mac_random(const std::string& name) {
  constexpr int kNetAddrRandom = 1;  // include/uapi/linux/netdevice.h
  return number<int>(sysfs_, "class/net/" + name + "/addr_assign_type") == kNetAddrRandom;
}

bool SysfsSriovHost::driver_loaded(const std::string& name) {
  return pci_driver_registered(sysfs_, name);
}

}  // namespace vfready::host
