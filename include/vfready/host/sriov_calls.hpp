// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "vfready/host/started_call.hpp"
#include "vfready/host/stuck_call.hpp"
#include "vfready/model/guid.hpp"
#include "vfready/model/pci_address.hpp"

// The calls a bring-up makes into a PF's driver. Each may wait on the device's lock,
// within a deadline, and answers 0, the errno the kernel gave, or kStuck; the pipeline
// turns that into a problem an operator can act on. An implementation alone decides
// where each call runs (a helper process, for SysfsSriovCalls); a pass starts each and
// awaits its answer (start_*). There are no waiting forms: nothing of vfreadyd may wait.
namespace vfready::host {

// What a probe did: whether it bound the VF, and the GUID the VF's port took at it, read
// back after it. A drivers_probe write succeeds whether or not a driver bound the VF
// (drivers_probe_store() reports no probe's result): only the VF's driver tells.
struct ProbedVf {
  int err = 0;                      // the probe's or the read's: 0, the errno, or kStuck
  bool bound = false;               // the VF has a driver after it
  std::string driver;               // which, where the host can tell ("": it cannot)
  std::optional<model::Guid> guid;  // as vf_port_guid reads it; nothing unless bound
  // With a read's errno: whether it was the port's GUID (OFED's sriov/<n>/port) that
  // could not be read, the VF being bound; else its uevent.
  bool port_unread = false;
};

// A failed write of a VF's GUID through OFED's sysfs: which of its files
// (sriov/<n>/node, port, policy), which errno.
struct OfedGuidError {
  enum class File { kNode, kPort, kPolicy };
  File file = File::kNode;
  int err = 0;
};

// What a pass reads of its PF as it validates it: its netdev, its RDMA device, and the
// link layer and state of port 1. The state is read through a device call, as the
// kernel serves it by asking the driver (state_show() -> ib_query_port(), for mlx5 a
// firmware command: drivers/infiniband/core/sysfs.c, mlx5_ib_query_port()).
struct PortRead {
  int err = 0;            // of the port's read: 0, the errno, or kStuck (the PF is stuck)
  bool vanished = false;  // the PF is gone from sysfs
  std::optional<std::string> netdev;
  std::optional<std::string> ib_device;  // none: no RDMA device (mlx5_ib not loaded?)
  bool rdma_over_netdev = false;         // model::PfInfo::rdma_over_netdev
  std::string link_layer;                // "InfiniBand", "Ethernet"; "" without one
  std::string state;                     // "4: ACTIVE"; "" without one
  // The read was not made, or its helper died before it answered: `err` is vfready's
  // trouble (no helper could be had, host::kHelperGone), not the driver's answer.
  bool unasked = false;
};

// A VF's RDMA device (RoCE) and its port 1, as a pass reads it back: the NIC's RDMA
// driver makes one as the VF probes (under the VF's PCI function), an operator may make
// a software one over its netdev (rdma link add ... type rxe). The port's state follows
// the netdev's carrier on RoCE ("1: DOWN" while the netdev is down).
struct VfRdmaRead {
  std::optional<std::string> device;  // none: the VF has no RDMA device
  bool over_netdev = false;           // a software device over its netdev
  std::string link_layer{};           // "Ethernet"
  std::string state{};                // "4: ACTIVE"
  int err = 0;                        // of the port's read: 0, the errno, or kStuck
  bool unasked = false;  // the read was not made (no helper could make it): `err` says why
};
using VfRdmaReads = std::vector<VfRdmaRead>;
// A VF to read so: its index and its netdev's name here ("" when it has none).
struct VfNetdev {
  uint16_t index = 0;
  std::string netdev;
};

using StartedProbe = StartedCall<ProbedVf>;
using AnsweredProbe = AnsweredCall<ProbedVf>;
using OfedGuidErrors = std::vector<std::optional<OfedGuidError>>;
// GUIDs read back, one slot a VF: nothing where none could be read.
using ReadGuids = std::vector<std::optional<model::Guid>>;

class SriovCalls {
 public:
  virtual ~SriovCalls() = default;
  // What keeps the PF stuck: a call into its driver that has not returned within its
  // deadline. While there is one, every call below for the PF or its VFs answers kStuck
  // at once (but set_autoprobe()), and reads of what the call locks answer nothing.
  virtual std::optional<StuckCall> stuck(const model::PciAddress& pf) = 0;
  // sriov_drivers_autoprobe: a flag of the PF that no driver's lock guards, so written
  // at once, stuck PF or not.
  virtual int set_autoprobe(const model::PciAddress& pf, bool on) = 0;
  // Every call below is started, not made: it does not wait for the driver (a
  // StartedCall's answer is taken once its fd is readable, or at its deadline).
  // sriov_numvfs: 0, the errno or kStuck.
  virtual std::unique_ptr<StartedCall<int>> start_set_num_vfs(const model::PciAddress& pf,
                                                              uint16_t count) = 0;
  // Binds VF `vf` of PF `pf` to its driver (drivers_probe): 0, the errno or kStuck. The
  // write succeeds whether or not a driver took the VF: start_read_probed_vf() tells.
  virtual std::unique_ptr<StartedCall<int>> start_probe_vf(const model::PciAddress& pf,
                                                           const model::PciAddress& vf) = 0;
  // After the probe of VF `vf` (its index `index`): whether it is bound, by which driver,
  // and when it is, the GUID its port took (as SriovReads::vf_port_guid). `err` is 0, or
  // why it could not be read: kStuck (the PF is stuck), or the errno (a helper that
  // died, a read the driver failed). Apart from the probe, so that the PF's next probe
  // need not wait for it.
  virtual std::unique_ptr<StartedProbe> start_read_probed_vf(const model::PciAddress& pf,
                                                             const model::PciAddress& vf,
                                                             uint16_t index, bool ofed) = 0;
  // Node and port GUID and the port policy of several VFs (index, GUID) in order, through
  // OFED's sysfs: one error slot per VF. Its answer may have fewer slots than VFs: a call
  // stops at the first failed write, and the VFs after it are the caller's to write
  // again (at least one slot, for the VF whose write failed).
  virtual std::unique_ptr<StartedCall<OfedGuidErrors>> start_set_vf_guids_ofed(
      const model::PciAddress& pf, std::span<const std::pair<uint16_t, model::Guid>> vfs,
      model::GuidPolicy policy) = 0;
  // The GUIDs the ports of PF `pf`'s VFs `indices` use, read back as
  // SriovReads::vf_port_guid reads one, started: reading OFED's sriov/<n>/port takes
  // the device's lock. At most kMaxGuidReads VFs a call.
  static constexpr std::size_t kMaxGuidReads = 14;
  virtual std::unique_ptr<StartedCall<ReadGuids>> start_read_vf_guids(
      const model::PciAddress& pf, std::span<const uint16_t> indices, bool ofed) = 0;
  // The RDMA devices of PF `pf`'s VFs `vfs` and their port 1, one slot a VF: the ports'
  // link layer and state in one device call (the kernel asks the driver for a state).
  // At most kMaxRdmaReads VFs a call.
  static constexpr std::size_t kMaxRdmaReads = 7;
  virtual std::unique_ptr<StartedCall<VfRdmaReads>> start_read_vf_rdma(
      const model::PciAddress& pf, std::span<const VfNetdev> vfs) = 0;
  // The PF and its port 1, as PortRead says.
  virtual std::unique_ptr<StartedCall<PortRead>> start_read_port(const model::PciAddress& pf) = 0;
  // Unbinds VF `vf` of PF `pf` from `driver`: 0, the errno or kStuck.
  virtual std::unique_ptr<StartedCall<int>> start_unbind_vf(const model::PciAddress& pf,
                                                            const model::PciAddress& vf,
                                                            const std::string& driver) = 0;
};

}  // namespace vfready::host
