// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <string>

#include "vfready/host/sriov_calls.hpp"
#include "vfready/host/sysfs.hpp"

// The calls into the driver of a real machine's PFs and VFs, over sysfs: every call that
// can wait on a device lock is a device call (Sysfs::on_device), made in a helper process
// under its deadline, and started (the caller's loop takes its answer). What is read
// without a driver's lock is SysfsSriovReads'.
namespace vfready::host {

// How long each kind of call into the driver may take before its PF is stuck.
struct DeviceDeadlines {
  std::chrono::milliseconds numvfs{120000};  // a write probes every VF it makes
  std::chrono::milliseconds probe{30000};    // one VF's probe
  std::chrono::milliseconds other{10000};    // autoprobe, unbind, GUID files
};

class SysfsSriovCalls final : public SriovCalls {
 public:
  explicit SysfsSriovCalls(Sysfs& sysfs, DeviceDeadlines deadlines = {})
      : sysfs_(sysfs), deadlines_(deadlines) {}

  std::optional<StuckCall> stuck(const model::PciAddress& pf) override;

  int set_autoprobe(const model::PciAddress& pf, bool on) override;
  // The probe: a write to drivers_probe, to a file its helper keeps open.
  std::unique_ptr<StartedCall<int>> start_probe_vf(const model::PciAddress& pf,
                                                   const model::PciAddress& vf) override;
  // The VF's uevent (its driver) and, with OFED's sriov/<n>/port, the GUID, in one device
  // call.
  std::unique_ptr<StartedProbe> start_read_probed_vf(const model::PciAddress& pf,
                                                     const model::PciAddress& vf, uint16_t index,
                                                     bool ofed) override;
  // One device call each (autoprobe's write is made at once, by set_autoprobe()).
  std::unique_ptr<StartedCall<int>> start_set_num_vfs(const model::PciAddress& pf,
                                                      uint16_t count) override;
  // The VFs' files in one device call, which stops at a failed write.
  std::unique_ptr<StartedCall<OfedGuidErrors>> start_set_vf_guids_ofed(
      const model::PciAddress& pf, std::span<const std::pair<uint16_t, model::Guid>> vfs,
      model::GuidPolicy policy) override;
  // OFED's sriov/<n>/port files in one device call; a VF without one (ENOENT), or every
  // VF without OFED, from its RDMA device (no device lock).
  std::unique_ptr<StartedCall<ReadGuids>> start_read_vf_guids(const model::PciAddress& pf,
                                                              std::span<const uint16_t> indices,
                                                              bool ofed) override;
  std::unique_ptr<StartedCall<VfRdmaReads>> start_read_vf_rdma(
      const model::PciAddress& pf, std::span<const VfNetdev> vfs) override;
  // The port's link layer and state in one device call.
  std::unique_ptr<StartedCall<PortRead>> start_read_port(const model::PciAddress& pf) override;
  std::unique_ptr<StartedCall<int>> start_unbind_vf(const model::PciAddress& pf,
                                                    const model::PciAddress& vf,
                                                    const std::string& driver) override;

 private:
  // What a probe's device call answered, as a ProbedVf (the GUID from OFED's port file
  // when the call read it, else from the VF's RDMA device).
  ProbedVf probed(const model::PciAddress& pf, uint16_t index,
                  const std::vector<DeviceOpResult>& got);

  Sysfs& sysfs_;
  DeviceDeadlines deadlines_;
};

}  // namespace vfready::host
