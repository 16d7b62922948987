// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "vfready/host/device_calls.hpp"

#include "vfready/model/guid.hpp"
#include "vfready/model/inventory.hpp"
#include "vfready/model/pci_address.hpp"

// What a bring-up does to a PF and its VFs, in the pipeline's words: no caller builds a
// path or picks a file. An implementation alone decides how each kernel call is made
// (which ones can wait on a device lock, and where they run). Calls that change
// something answer 0 or the errno the kernel gave; the pipeline turns that into a
// problem an operator can act on.
namespace vfready::host {

// A VF's binding as udev and naming need it: its netdev in this namespace, or, without
// one, the driver that holds it (none: unbound).
struct VfBinding {
  std::optional<std::string> netdev;
  std::optional<std::string> driver;
};

// A probe, whether it bound the VF, and the GUID the VF's port took at it, read back
// after it. A drivers_probe write succeeds whether or not a driver bound the VF
// (drivers_probe_store() reports no probe's result): only the VF's driver tells.
struct ProbedVf {
  int err = 0;                      // the write's: 0, the errno, or kStuck
  bool bound = false;               // the VF has a driver after it
  std::string driver;               // which, where the host can tell ("": it cannot)
  std::optional<model::Guid> guid;  // as vf_port_guid reads it; nothing unless bound
};

// The PCI function behind a netdev, and its PF when that function is a VF.
struct NetdevDevice {
  std::optional<std::string> pci;
  std::optional<std::string> physfn;
};

// A failed write of a VF's GUID through OFED's sysfs: which of its files
// (sriov/<n>/node, port, policy), which errno.
struct OfedGuidError {
  enum class File { kNode, kPort, kPolicy };
  File file = File::kNode;
  int err = 0;
};

class SriovHost {
 public:
  virtual ~SriovHost() = default;

  // --- Reading what is there.
  // The PF as it is now, its VFs too unless `with_vfs` is false; nullopt when there is
  // no such PF (absent, or a VF).
  virtual std::optional<model::PfInfo> read_pf(const model::PciAddress& pf, bool with_vfs) = 0;
  // VF `index` of the PF, everything known of it.
  virtual model::VfInfo read_vf(const model::PciAddress& pf, uint16_t index) = 0;
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
  // The state of a port of the PF's RDMA device ("4: ACTIVE"), nullopt when unreadable.
  virtual std::optional<std::string> port_state(const model::PciAddress& pf,
                                                const std::string& ib_device, int port) = 0;
  // The PCI function a netdev belongs to, and its PF.
  virtual NetdevDevice device_of_netdev(const std::string& netdev) = 0;
  // The kernel log's lines that name `device` (a PCI address), oldest first.
  virtual std::vector<std::string> kernel_log_naming(const std::string& device) = 0;

  // What keeps the PF stuck: a call into its driver that has not returned within its
  // deadline. While there is one, every call below for the PF or its VFs answers kStuck
  // at once, and reads of what the call locks answer nothing.
  virtual std::optional<StuckCall> stuck(const model::PciAddress& pf) = 0;

  // --- Calls into the driver. Each may wait for the device, within a deadline: 0, the
  // errno, or kStuck. Never from the event loop.
  virtual int set_autoprobe(const model::PciAddress& pf, bool on) = 0;
  virtual int set_num_vfs(const model::PciAddress& pf, uint16_t count) = 0;
  // Node and port GUID and the port policy, through OFED's sysfs.
  virtual std::optional<OfedGuidError> set_vf_guid_ofed(const model::PciAddress& pf, uint16_t index,
                                                        model::Guid guid,
                                                        const std::string& policy) = 0;
  // set_vf_guid_ofed for several VFs (index, GUID) in order: one error slot per VF. A
  // host may make them one call into the driver.
  virtual std::vector<std::optional<OfedGuidError>> set_vf_guids_ofed(
      const model::PciAddress& pf, std::span<const std::pair<uint16_t, model::Guid>> vfs,
      const std::string& policy) {
    std::vector<std::optional<OfedGuidError>> out;
    for (const auto& [index, guid] : vfs) {
      out.push_back(set_vf_guid_ofed(pf, index, guid, policy));
    }
    return out;
  }
  // Node and port GUID over netlink, on the PF's IPoIB netdev.
  virtual int set_vf_guid_netlink(int pf_ifindex, uint16_t index, model::Guid guid) = 0;
  // Binds VF `vf` of PF `pf` to its driver (drivers_probe).
  virtual int probe_vf(const model::PciAddress& pf, const model::PciAddress& vf) = 0;
  // probe_vf, then whether the VF is bound, and when it is, vf_port_guid for VF `index`:
  // the GUID its port took. A host may make them one call into the driver.
  virtual ProbedVf probe_vf_reading_guid(const model::PciAddress& pf, const model::PciAddress& vf,
                                         uint16_t index, bool ofed) {
    ProbedVf out{.err = probe_vf(pf, vf), .bound = false, .driver = {}, .guid = std::nullopt};
    if (out.err == 0) {
      const auto binding = vf_binding(pf, index);
      out.bound = binding.netdev.has_value() || binding.driver.has_value();
      out.driver = binding.driver.value_or("");
    }
    if (out.bound) {
      out.guid = vf_port_guid(pf, index, ofed);
    }
    return out;
  }
  // Unbinds VF `vf` of PF `pf` from `driver`.
  virtual int unbind_vf(const model::PciAddress& pf, const model::PciAddress& vf,
                        const std::string& driver) = 0;
};

}  // namespace vfready::host
