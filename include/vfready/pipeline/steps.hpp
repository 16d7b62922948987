// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "vfready/host/clock.hpp"
#include "vfready/model/checks.hpp"
#include "vfready/model/compat_table.hpp"
#include "vfready/pipeline/autoprobe_guard.hpp"
#include "vfready/pipeline/pf_run.hpp"
#include "vfready/pipeline/step.hpp"
#include "vfready/pipeline/task.hpp"
#include "vfready/pipeline/vf_requests.hpp"

// The steps of one PF's bring-up, in the order pf_pass runs them. Each first looks
// at what is there and does only what is missing, so a second pass (or a pass after a
// crash) changes nothing that is already right. PF steps answer for the PF: a failed
// one ends its pass. VF steps answer for one VF: a failed one is that VF's problem.
namespace vfready::pipeline {

// The problem of a PF whose driver has not returned from a call (host::kStuck).
model::Problem stuck_problem(PfRun& run);
// At the end of a pass: a stuck PF is in state kStuck with one problem that names the
// call, instead of one per call that met it.
void settle_stuck(PfRun& run);

// Step "hardware", first: the PF as the host read found it, into run.info, and port 1's
// state where that read left it to the pass (PortInfo::state_unread).
Task<Done> find_hardware(PfRun& run, const model::HostInfo& host);
// Then: present, driver bound, firmware, link layer, port, SR-IOV capacity, as found.
StepResult check_hardware(PfRun& run, const model::CompatTable& table, const model::HostInfo& host);

// Step "vfs": sriov_numvfs as configured, never destroying VFs in use. New VFs stay
// unbound (autoprobe off, through `autoprobe`) so that their GUIDs are set before their
// one probe; then where each new VF is goes into run.info.
Task<StepResult> ensure_vf_count(PfRun& run, AutoprobeGuard& autoprobe);

// Why a VF is in use and must be left alone (false when it is not): bound to another
// driver (vfio-pci), or bound to mlx5 with its netdev gone from this namespace (a
// pod's). The one rule every step asks.
model::VfUse in_use(const model::VfInfo& vf, std::string_view vf_driver = "mlx5_core");

// How a VF comes to carry its GUID.
enum class GuidAction {
  kKeep,          // right already (or, bound, nothing can tell otherwise)
  kInUse,         // another driver holds it: left alone
  kConflict,      // its GUID is wrong, but a pod has it: left alone, a problem
  kSetAndProbe,   // unbound: set the GUID, then its one probe
  kSetAndRebind,  // bound with a wrong GUID: set, unbind, probe
};
// How GUIDs reach this PF's VFs.
// kEthernet: an Ethernet port (RoCE or a NIC without RDMA) has no GUID: its VFs get their
// MAC (and the entry's VF settings) through the PF's netdev instead, in the same place.
enum class GuidPath { kOfedSysfs, kNetlink, kNone, kEthernet };
GuidPath guid_path(const model::PfInfo& info);
GuidAction guid_action(const model::VfTarget& target, const model::VfInfo& vf, GuidPath path,
                       std::string_view vf_driver = "mlx5_core");

// Step "guids", for one VF whose PF has no OFED files: the netlink request that sets its
// GUID (it takes effect at the VF's next probe), and the request's answer judged.
host::LinkRequest vf_guid_request(const PfRun& run, const model::VfTarget& vt);
StepResult netlink_guid_set(PfRun& run, const model::VfTarget& vt, int err);
// Before step "vfs": an Ethernet PF whose VFs get MACs set up (IFF_UP; a no-op when it
// is). igb keeps a MAC set while its PF is down from the VF, and a VF probed while the PF
// is still resetting takes a random MAC (both seen on a real kernel): up first, its reset
// done by the time the VFs are probed. A failure is a problem of the PF.
Task<Done> pf_up(PfRun& run);
// After the VFs are made and before autoprobe is on again: the VF driver, when the host
// read found it not loaded. udev loads it by the new VFs' modalias as it handles their
// add events; while autoprobe is off the driver binds none of them as it registers, so
// each is still probed once, after its MAC. Looked for every 100 ms up to
// timeouts.modules_ms; the probes say what is missing when it does not come.
Task<Done> vf_driver_loaded(PfRun& run);
// The request that sets an Ethernet VF's MAC and settings through its PF (they take
// effect at the VF's next probe), and its answer judged.
host::LinkRequest vf_port_request(const PfRun& run, const model::VfTarget& vt);
StepResult vf_port_set(PfRun& run, const model::VfTarget& vt, int err);
// What VF `got`, as its PF's driver reports it, has that differs from its MAC and the
// entry's settings (`want`), as "vlan 0 qos 0, not vlan 10 qos 3"; empty when nothing does.
std::string vf_port_difference(const model::VfTarget& vt, const model::VfPortConfig& want,
                               const host::VfPort& got);
// Step "validate" of an Ethernet PF: each VF the pass judged so far, as the PF's driver
// reports it (IFLA_VFINFO_LIST), against its MAC and settings; one that differs is given
// them once more, and is not ready if it still differs. Failed when the PF cannot be asked.
Task<StepResult> check_vf_ports(PfRun& run);
// Step "validate" of an Ethernet PF: each VF the pass judged so far, its RDMA device
// (RoCE) and port 1 read back. Where the PF's driver made the PF one (mlx5_ib, bnxt_re,
// irdma), a VF without one, or whose port cannot be read, is not ready; the port's state
// is reported, not required (it follows the VF netdev's carrier, up where it is used).
// Failed when the PF is stuck.
Task<StepResult> check_vf_rdma(PfRun& run);
// A PF with no way to set GUIDs (GuidPath::kNone): what that does to each VF.
StepResult no_guid_path(PfRun& run, const model::VfTarget& vt);
// Step "guids", for every VF: adds each to run.vfs and hands each VF that needs a
// probe to `feed` as soon as its GUID is set.
Task<Done> assign_guids(PfRun& run, GuidFeed& feed);

// A VF's probe: the problem when it failed, else the GUID its port took, read back
// right after it (nothing when it cannot be read).
struct Probe {
  std::optional<model::Problem> error;
  std::optional<model::Guid> guid;
};
// What the probe of VF `vf` answered (SriovCalls::start_probe_vf), judged: whether a
// driver, and the right one, took it (the kernel log's lines on it when not).
Probe judge_probe(PfRun& run, const model::PciAddress& vf, const host::ProbedVf& probed);
// What a failed write of a VF's OFED GUID files says (pf-stuck for kStuck).
model::Problem ofed_problem(PfRun& run, const model::VfTarget& vt, const host::OfedGuidError& e);
// What a started write of one VF's OFED files answered: its error, if any. An answer
// without a slot (the call reached none of its files) is one too: EIO.
std::optional<host::OfedGuidError> one_vf_error(const host::OfedGuidErrors& errors);
// What an unbind of VF `vf` that answered `err` says: nothing for 0, pf-stuck for kStuck.
std::optional<model::Problem> unbind_problem(PfRun& run, const model::PciAddress& vf, int err);

// Step "udev", for one VF: its netdev is here and udev is done with it. Waiting while
// udev is not; done for a VF in use (nothing to wait for). `netdev`: whether this pass
// probed the VF (its netdev is new) or found it bound.
StepResult settle_vf(PfRun& run, VfWork& vs, host::UdevWait::Netdev netdev);

// Step "names": the PF's netdev, and one VF's (run.vfs[at].ifindex), get name, altnames, MTU,
// each awaiting its link requests, in a naming turn of the node's (NameRegistry).
// Problems go to the PF's or the VF's list. `announced`: vs.ifindex and vs.name are what
// udev's add said of a netdev this pass's probe has just made, so naming does not ask the
// kernel first (a new netdev has no altnames of vfready's; the MTU is sent with the name).
// What name_vf() answers: see Naming (vf_requests.hpp). Both in the caller's turn.
Task<Done> name_pf(PfRun& run);
// name_pf() as a VfRequests' naming (add_pf_naming()).
Task<Naming> name_pf_request(PfRun& run);
Task<Naming> name_vf(PfRun& run, std::size_t at, bool announced = false);
// The node's naming turn (NameRegistry), awaited: `turn`'s once this is done, until it
// goes. `turn_fd`: NameRegistry::turn_fd().
Task<Done> await_naming_turn(NamingTurn& turn, int turn_fd);

// Step "validate", for one VF: its GUID as read back (`read_back`: right after this
// pass's probe of it, as a GUID is taken at the probe, or by read_back_guids) and its
// names (as the kernel answered the pass's last request about its link: run.named).
// False when the GUID its port uses is not its own.
bool validate_vf(PfRun& run, VfWork& vs, const std::optional<model::Guid>& read_back);
// Why validate_vf() answered false for VF `vs`: a warning of its PF, said as it is re-probed.
model::Problem reprobe_reason(const PfRun& run, const VfWork& vs);
// The links `ifindices` asked of the kernel again, into run.named (emptied first): ends
// early when a request does not return (the PF is then stuck).
Task<Done> links_read_back(PfRun& run, std::vector<int> ifindices);
// Step "validate": the GUIDs the ports of VFs `indices` use, read back through started
// device calls (OFED's files take the device's lock), one slot a VF.
Task<host::ReadGuids> read_back_guids(PfRun& run, std::vector<uint16_t> indices);
// Step "validate", for the PF: its name (netlink), link layer and port state (a device
// call: SriovCalls::start_read_port) read back. Failed when the PF is gone or stuck.
Task<StepResult> validate_pf(PfRun& run);
// Step "validate", for the PF: its port ACTIVE, where required, looked at again every
// kPortLookEvery while the subnet manager brings it up (the state has no event to wait
// for), until `until`.
inline constexpr std::chrono::milliseconds kPortLookEvery{250};
Task<StepResult> await_port_active(PfRun& run, Wait::Clock::time_point until);

// A netdev whose udev event came before the pass listened (or without an event fd to
// hear it on) would hold its wait to the bound: libudev is asked after this, and at the
// bound.
inline constexpr std::chrono::seconds kAskLibudevAfter{1};

// Where a step that waits on udev for a VF's netdev hears of it: an fd of
// UdevWait::subscribe() (-1: none, the step looks again at its bounds) and the VF.
struct UdevWatch {
  int fd = -1;
  model::PciAddress pci = model::PciAddress::from_parts(0, 0, 0, 0);  // with an fd: the VF
};
// Runs `step` until it is done or failed, waiting in between as it asks (on udev through
// `watch`, asking libudev after a second and at the deadline; or for the step's retry),
// until `deadline`; then its on_timeout problem.
Task<StepResult> run_until(PfHost& os, host::Clock::time_point deadline,
                           std::function<StepResult()> step, UdevWatch watch);

}  // namespace vfready::pipeline
