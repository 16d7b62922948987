// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

#include "vfready/host/started_on_device.hpp"
#include "vfready/host/sysfs.hpp"
#include "vfready/model/pci_address.hpp"

// What SysfsSriovHost's sources share (sysfs_sriov_host.cpp, sysfs_port_reads.cpp).
namespace vfready::host {

// "bus/pci/devices/<pf>/"
inline std::string pf_dir(const model::PciAddress& pf) {
  constexpr std::string_view kDevices = "bus/pci/devices/";
  const auto name = pf.text();
  std::string out;
  out.reserve(kDevices.size() + name.view().size() + 1);
  return out.append(kDevices).append(name.view()).append(1, '/');
}

// What finishes a call started through `sysfs`.
inline StartedOnDevice<int>::Finish finisher(Sysfs& sysfs) {
  return [&sysfs](DeviceCalls::Pending call) { return sysfs.finish_on_device(std::move(call)); };
}

}  // namespace vfready::host
