// SPDX-License-Identifier: Apache-2.0
#include "pf_reads.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <string_view>

#include "attribute_reads.hpp"
#include "vfready/host/errno_name.hpp"
#include "vfready/host/host_reader.hpp"

namespace vfready::host {

// The ports' link layer, and `with_state` their state and physical state, through a
// device call: the kernel serves a port's state by asking the driver (state_show() ->
// ib_query_port(), for mlx5 a firmware command), which a firmware that does not answer
// holds. Ports past what one call holds are read from the link layer only.
void read_ports(Sysfs& sysfs, const model::PciAddress& pci, const std::string& ib_dir,
                const std::vector<std::string>& ports, model::PfInfo& pf, bool with_state) {
  std::vector<DeviceOp> ops;
  for (const auto& p : ports) {
    const auto port_dir = ib_dir + "ports/" + p + "/";
    pf.ports.push_back(
        {text(sysfs, port_dir + "link_layer").value_or("Unknown"), "", "", "", !with_state});
    if (with_state && ops.size() + 2 <= DeviceCalls::kMaxOps) {
      ops.push_back({DeviceOp::Kind::kRead, port_dir + "state", {}});
      ops.push_back({DeviceOp::Kind::kRead, port_dir + "phys_state", {}});
    }
  }
  if (ops.empty()) {
    return;
  }
  const auto got = sysfs.on_device(pci.str(), ops, {});
  if (!got.empty() && got.back().err == kStuck && !pf.stuck) {
    const auto stuck = sysfs.stuck(pci.str());
    pf.stuck = stuck ? stuck->call : "a read of a port's state";
  }
  // Each read answered (a call that could not be made answers once, for all of them):
  // a read that failed is the driver's answer. Not one that found the file gone (the RDMA
  // device going away): the pass finds that out itself.
  const bool answered = got.size() == ops.size();
  for (std::size_t i = 0; 2 * i + 1 < ops.size(); ++i) {
    pf.ports[i].state = read_text(got, 2 * i);
    const int err = answered ? got[2 * i].err : 0;
    if (err != 0 && err != kStuck && err != ENOENT && err != ENODEV) {
      pf.ports[i].state_error = errno_name(err);
    }
    pf.ports[i].phys_state = read_text(got, 2 * i + 1);
  }
}

// sriov_numvfs, through a device call: the one attribute here that takes the device lock
// (it waits for a write of it). 0 when it cannot be read; `pf` stuck when it is held.
uint16_t read_numvfs(Sysfs& sysfs, const std::string& dir, model::PfInfo& pf) {
  const auto numvfs =
      sysfs.on_device(pf.pci.str(), {{DeviceOp::Kind::kRead, dir + "sriov_numvfs", {}}}, {});
  if (numvfs.back().err == kStuck) {
    const auto stuck = sysfs.stuck(pf.pci.str());
    pf.stuck = stuck ? stuck->call : "a read of sriov_numvfs";
    return 0;
  }
  uint16_t n = 0;
  const auto& t = numvfs.back().text;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
  return numvfs.back().err == 0 && ec == std::errc{} && ptr == t.data() + t.size() ? n : 0;
}

// The VFs a PF has, without its device lock: the indexes of its virtfn<n> links, in
// order (pci_iov_add_virtfn() makes one for each VF it adds, through
// pci_iov_sysfs_link(); sriov_del_vfs() removes them from VF 0 up, so while another
// writer disables its VFs the ones left are the last), in drivers/pci/iov.c.
std::vector<uint16_t> virtfn_indexes(Sysfs& sysfs, const std::string& dir) {
  constexpr std::string_view kVirtfn = "virtfn";
  std::vector<uint16_t> out;
  for (const auto& name : sysfs.list(dir)) {
    uint16_t index = 0;
    const char* end = name.data() + name.size();
    if (!name.starts_with(kVirtfn)) {
      continue;
    }
    const auto [ptr, ec] = std::from_chars(name.data() + kVirtfn.size(), end, index);
    if (ec == std::errc{} && ptr == end) {
      out.push_back(index);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace vfready::host
