// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vfready/model/events.hpp"
#include "vfready/model/guid.hpp"
#include "vfready/model/mac.hpp"
#include "vfready/model/pci_address.hpp"
#include "vfready/model/problem.hpp"

// What vfready reports: per PF and VF, what is there and what is wrong.
namespace vfready::model {

// Why a VF is in use and left alone: another driver (vfio-pci) holds it, or a pod has its
// netdev (bound to mlx5_core, its netdev in another network namespace). In use is not a
// problem.
struct VfUse {
  enum class Why : uint8_t { kNo, kOtherDriver, kNetdevElsewhere };
  Why why = Why::kNo;
  std::string driver;  // kOtherDriver: which
  [[nodiscard]] explicit operator bool() const { return why != Why::kNo; }
  // "bound to vfio-pci", "its netdev is in another network namespace"; "" when not in use.
  [[nodiscard]] std::string text() const;
  friend bool operator==(const VfUse&, const VfUse&) = default;
};

// What vfready gave a PF's netdev besides its name, as planned and read back by its last
// pass (a ready PF's; empty otherwise): the drift watch holds its link events against it.
struct LinkGiven {
  std::vector<std::string> altnames;
  std::optional<uint32_t> mtu;
  friend bool operator==(const LinkGiven&, const LinkGiven&) = default;
};

struct VfStatus {
  uint16_t index = 0;
  PciAddress pci = PciAddress::from_parts(0, 0, 0, 0);
  std::string name;
  std::vector<std::string> altnames;
  std::optional<Guid> guid;  // the GUID its port uses, as read back; nullopt when unknown
  std::optional<Mac> mac;    // an Ethernet VF's netdev address, as read back
  int ifindex = 0;
  VfUse in_use;
  std::vector<Problem> problems;
  // False for a VF listed as found on a PF whose pass failed before it got to the VFs:
  // what is there, not a judgement of it.
  bool checked = true;
  // What its last pass gave its netdev and judged right (a ready VF's): its altnames,
  // those of the row (given: read back, vfready's with udev's), and its MTU. The drift
  // watch holds its link events against them.
  bool given = false;
  std::optional<uint32_t> given_mtu{};
};

// A VF as reported: ready, left alone because something uses it, with problems, or not
// checked (its PF failed first).
enum class VfState { kReady, kInUse, kFailed, kUnchecked };
const char* to_string(VfState state);
VfState state_of(const VfStatus& vf);

// kStuck: a call into the PF's driver has not returned (see host::DeviceCalls); the
// PF is left alone until it does.
enum class PfState { kPending, kReady, kFailed, kStuck };
const char* to_string(PfState state);

enum class StepState { kRunning, kDone, kFailed };
const char* to_string(StepState state);

// One step of one PF's bring-up, as the daemon saw it start and end.
struct StepTiming {
  std::string name;
  StepState state = StepState::kRunning;
  double started_ms = 0;  // since the daemon started
  double elapsed_ms = 0;  // so far, while running
  friend bool operator==(const StepTiming&, const StepTiming&) = default;
};

// What a PF is, as the plan and the host said before its bring-up: kept whatever state
// the PF reaches, so that a PF that failed before it was renamed is still found by its
// configured or kernel name, and configs for the cluster can be derived from it.
struct PfIdentity {
  std::string configured_name;  // the name the plan gives it ("" when none)
  std::string kernel_name;      // its netdev's name when vfready found it
  uint16_t vendor = 0;
  uint16_t device = 0;
  uint16_t vf_device = 0;  // sriov_vf_device (0x101e on ConnectX-7)
  uint16_t vfs_configured = 0;
};

// What a pass changed on the PF: on a host another tool set up (or a pass that died),
// what vfready replaced. All zero when the PF was right as found.
struct PfChanges {
  uint32_t vfs_created = 0;         // VFs the sriov_numvfs write made
  uint32_t guids_set = 0;           // VF GUIDs written
  uint32_t macs_set = 0;            // Ethernet VF MACs (and settings) written through the PF
  uint32_t vfs_rebound = 0;         // bound VFs with a wrong GUID, unbound and probed again
  uint32_t vfs_rebound_mac = 0;     // bound Ethernet VFs with a wrong MAC or one made up, the same
  uint32_t links_renamed = 0;       // PF and VF netdevs given their names
  bool autoprobe_restored = false;  // sriov_drivers_autoprobe found off, turned on again
  [[nodiscard]] bool any() const {
    return vfs_created + guids_set + macs_set + vfs_rebound + vfs_rebound_mac + links_renamed > 0 ||
           autoprobe_restored;
  }
  bool operator==(const PfChanges&) const = default;
};
// "8 VFs created, 8 GUIDs set, 9 links renamed", "" when nothing changed.
std::string describe(const PfChanges& changes);
PfChanges& operator+=(PfChanges& total, const PfChanges& more);

// An Ethernet VF's RDMA device (RoCE) and its port 1's state as read ("1: DOWN"). Kept
// beside the VFs, only for those that have one: an InfiniBand node pays nothing a VF.
struct VfRdmaStatus {
  uint16_t index = 0;  // the VF's
  std::string device;  // "mlx5_3", "rxe1"
  std::string port_state;
  friend bool operator==(const VfRdmaStatus&, const VfRdmaStatus&) = default;
};

struct PfStatus {
  PciAddress pci = PciAddress::from_parts(0, 0, 0, 0);
  PfIdentity identity;
  PfChanges changes;  // of the last pass over it
  std::string name;
  int ifindex = 0;
  LinkGiven given;  // of its netdev
  std::string link_layer;
  std::string rdma_device;  // "mlx5_0", "rxe0"; "" when it has none
  std::string port_state;
  PfState state = PfState::kPending;
  std::string step;  // the step running, or the one that failed
  std::vector<Problem> problems;
  std::vector<Problem> warnings;
  std::vector<VfStatus> vfs;
  std::vector<VfRdmaStatus> vf_rdma;  // of the VFs that have an RDMA device
  std::vector<StepTiming> steps;
  uint32_t sriov_writes = 0;  // sriov_numvfs writes made
  double elapsed_ms = 0;
};

enum class Outcome { kReady, kDegraded, kFailed };
const char* to_string(Outcome outcome);

enum class DaemonState { kStarting, kConfiguring, kReady, kDegraded, kFailed };
const char* to_string(DaemonState state);
DaemonState state_of(Outcome outcome);

// ready: every PF ready; failed: none; degraded: some.
Outcome outcome_of(const std::vector<PfStatus>& pfs);

// Something that changed under vfready after the bring-up (drift), and what it did.
struct DriftEvent {
  double at_ms = 0;  // since the daemon started
  std::string pf;
  std::string vf;
  std::string message;
};

// Everything the daemon reports: what its bus API and `vfreadyctl` show.
struct DaemonStatus {
  // The links in a name fight whose row shows the other tool's name (the host's): their
  // PCI address -> the name vfready gives them, until a pass over their PF.
  std::map<std::string, std::string> contested_names;
  std::string version;
  std::string config_file;
  // Counts the configurations put in force: 1 at start, one more each reload applied.
  uint32_t config_generation = 1;
  DaemonState state = DaemonState::kStarting;
  std::string text;               // the last STATUS= line
  std::vector<Problem> problems;  // not of one PF: driver, config, reload
  std::vector<PfStatus> pfs;
  std::vector<DriftEvent> recent_events;  // the latest, oldest first
  double ready_ms = -1;    // when the last pass reached its outcome, since start; -1 before
  double bringup_ms = -1;  // when the first one did
  double pass_ms = -1;     // how long the last pass took, from its start to its outcome
  // When the daemon started, in ms since the Unix epoch (wall clock): what the times
  // since start are relative to when shown as dates.
  int64_t started_unix_ms = 0;
  // Whether the node is ready as systemd was told: the last outcome was ready, or
  // degraded with outcome.degraded "ready".
  bool node_ready = false;
  uint64_t drift_events = 0;  // changes under vfready after READY, each repaired by a pass
  // Passes started and passes that reached their outcome since start: a pass asked for
  // (Reconcile, a reload) has its outcome when passes_finished reaches its number.
  uint64_t passes_started = 0;
  uint64_t passes_finished = 0;
  PfChanges changes;  // what the last pass changed, over the PFs it covered
};

// The status with every text made printable (vfready/model/printable.hpp): what D-Bus
// and JSON may carry, whatever names the host gave its netdevs.
DaemonStatus printable(DaemonStatus status);
// Whether printable(status) is `status` as it is: every text of it printable already
// (as a host's names nearly always are), so that no copy need be made to show it.
bool is_printable(const DaemonStatus& status);

// Each step across all PFs: earliest start, latest end, the worst state.
std::vector<StepTiming> overall_steps(const std::vector<PfStatus>& pfs);
// How many VFs the status lists, over every PF.
uint32_t vf_count(const DaemonStatus& status);

}  // namespace vfready::model
