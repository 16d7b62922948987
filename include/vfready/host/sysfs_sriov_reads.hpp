// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "vfready/host/sriov_reads.hpp"
#include "vfready/host/sysfs.hpp"

// What is read of PFs and VFs on a real machine, over sysfs: attributes whose show
// functions take no device lock and no rtnl_lock (the drift watch reads them on the
// loop). Every sysfs path vfready uses is built in this class's sources, in
// SysfsSriovCalls' or in host_reader.
namespace vfready::host {

class SysfsSriovReads final : public SriovReads {
 public:
  // `kernel_log`: where the kernel log is read (/dev/kmsg, or a file of it).
  explicit SysfsSriovReads(Sysfs& sysfs, std::string kernel_log = "/dev/kmsg")
      : sysfs_(sysfs), kernel_log_(std::move(kernel_log)) {}

  std::optional<model::PciAddress> vf_address(const model::PciAddress& pf, uint16_t index) override;
  bool has_ofed_sriov(const model::PciAddress& pf) override;
  VfBinding vf_binding(const model::PciAddress& pf, uint16_t index) override;
  std::optional<model::Guid> vf_port_guid(const model::PciAddress& pf, uint16_t index,
                                          bool ofed) override;
  std::optional<std::string> netdev_of(const model::PciAddress& function) override;
  bool driverless(const model::PciAddress& function) override;
  NetdevDevice device_of_netdev(const std::string& netdev) override;
  std::vector<std::string> kernel_log_naming(const std::string& device) override;
  bool driver_loaded(const std::string& name) override;
  std::optional<model::Mac> netdev_mac(const std::string& name) override;
  std::optional<uint32_t> netdev_mtu(const std::string& name) override;
  bool netdev_mac_random(const std::string& name) override;

 private:
  Sysfs& sysfs_;
  std::string kernel_log_;
};

}  // namespace vfready::host
