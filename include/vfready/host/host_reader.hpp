// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "vfready/host/sysfs.hpp"
#include "vfready/model/inventory.hpp"
#include "vfready/model/plan.hpp"

// Reads what the host looks like from sysfs, /proc and the kernel log. Reads that take a
// device lock (sriov_numvfs, OFED's GUID files) are device calls (Sysfs::on_device); a
// PF whose call does not return in time is read as stuck. Call from a worker thread.
namespace vfready::host {

struct HostPaths {
  std::string proc_root = "/proc";
  std::string kernel_log = "/dev/kmsg";
  // Where modules.alias is: <modules_dir>/<kernel release>/modules.alias.
  std::string modules_dir = "/lib/modules";
};

// Every PF with SR-IOV, of any vendor, with its VFs; and every function of vendor 0x15b3
// (Mellanox) or that `whole` selects by address, SR-IOV or not, so that a check can say
// what it lacks. Of one that `whole` says no
// config entry can select, no device call: its VFs counted by their virtfn links, its
// ports' state and its VFs' GUIDs not read (a driver or firmware that holds such a call
// holds no bring-up up). `whole` null: every function with them. Without `port_states`,
// no port's state is read (PortInfo::state_unread): the daemon's passes read their own
// PF's, so that a firmware holding one such read holds up that PF alone. `read_one`,
// when set, is called as each function of interest has been read (from the threads
// that read them, at once): how a caller sees the read go on.
model::HostInfo read_host(Sysfs& sysfs, const HostPaths& paths,
                          const model::Selectable* whole = nullptr, bool port_states = true,
                          const std::function<void()>& read_one = {});
// Which of `modules` are not loaded (no /sys/module/<name>).
std::vector<std::string> missing_modules(Sysfs& sysfs, const std::vector<std::string>& modules);
// What binding changed: the VF's netdev name, or (without one) its driver. No ifindex:
// callers ask netlink for it, where it costs no sysfs access.
model::VfInfo read_vf_binding(Sysfs& sysfs, const std::string& pf_dir, uint16_t index);
// Where a VF is (its virtfn<n> link), nullopt when it is not there.
std::optional<model::PciAddress> read_vf_address(Sysfs& sysfs, const std::string& pf_dir,
                                                 uint16_t index);
// The GUID a device call's read gave; nothing when the read failed or it is not one.
std::optional<model::Guid> parsed_guid(const DeviceOpResult& r);
// The text read by op `i` of a device call ("" when it failed or was not made); a
// helper's read comes without its trailing newline.
std::string read_text(const std::vector<DeviceOpResult>& got, std::size_t i);
// Only the GUID a VF's port uses, read back: OFED's sriov/<n>/port when `ofed` (the PF
// has those files) and it is there, or else the VF's RDMA device (port 1's GID 0).
// Nothing when neither can tell.
std::optional<model::Guid> read_vf_port_guid(Sysfs& sysfs, const model::PciAddress& pf,
                                             uint16_t index, bool ofed);

// The kernel log's message texts, from /dev/kmsg (one record per read) or a file of
// records a line; non-blocking, so it returns at the end of the buffer.
std::vector<std::string> read_kernel_log(const std::string& path);

}  // namespace vfready::host
