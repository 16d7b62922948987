// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "vfready/host/started_on_device.hpp"
#include "vfready/host/sysfs.hpp"
#include "vfready/model/pci_address.hpp"

// What the sources of SysfsSriovReads and SysfsSriovCalls share.
namespace vfready::host {

// "bus/pci/devices/<pf>/"
inline std::string pf_dir(const model::PciAddress& pf) {
  constexpr std::string_view kDevices = "bus/pci/devices/";
  const auto name = pf.text();
  std::string out;
  out.reserve(kDevices.size() + name.view().size() + 1);
  return out.append(kDevices).append(name.view()).append(1, '/');
}

// "bus/pci/devices/<pf>/sriov/<index>/": OFED's files of a VF.
inline std::string ofed_dir(const model::PciAddress& pf, uint16_t index) {
  // Room for the file's name too: made once for the file.
  auto out = pf_dir(pf);
  out.reserve(out.size() + 24);
  return out.append("sriov/").append(std::to_string(index)).append(1, '/');
}

// The netdev of a PCI function (the first under its net/), if it has one.
inline std::optional<std::string> netdev_under(Sysfs& sysfs, const model::PciAddress& function) {
  auto names = sysfs.list(pf_dir(function) + "net");
  return names.empty() ? std::nullopt : std::optional<std::string>(std::move(names.front()));
}

// What finishes a call started through `sysfs`.
inline StartedOnDevice<int>::Finish finisher(Sysfs& sysfs) {
  return [&sysfs](DeviceCalls::Pending call) { return sysfs.finish_on_device(std::move(call)); };
}

}  // namespace vfready::host
