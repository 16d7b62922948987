// SPDX-License-Identifier: Apache-2.0
// The reads of RDMA ports of SysfsSriovCalls (sysfs_sriov_calls.hpp), device calls: a PF's, its
// VFs'.
#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "rdma_devices.hpp"
#include "sysfs_sriov_parts.hpp"
#include "vfready/host/host_reader.hpp"
#include "vfready/host/started_on_device.hpp"
#include "vfready/host/sysfs_sriov_calls.hpp"

namespace vfready::host {

std::unique_ptr<StartedCall<VfRdmaReads>> SysfsSriovCalls::start_read_vf_rdma(
    const model::PciAddress& pf, std::span<const VfNetdev> vfs) {
  VfRdmaReads found(std::min(vfs.size(), kMaxRdmaReads));
  std::vector<DeviceOp> ops;
  std::vector<std::size_t> read;  // the slots whose port is read, in the order of `ops`
  for (std::size_t i = 0; i < found.size(); ++i) {
    const auto function = pf_dir(pf) + "virtfn" + std::to_string(vfs[i].index) + "/";
    const auto netdev =
        vfs[i].netdev.empty() ? std::nullopt : std::optional<std::string>(vfs[i].netdev);
    if (const auto rdma = rdma_device_of(sysfs_, function, netdev)) {
      found[i].device = rdma->name;
      found[i].over_netdev = rdma->over_netdev;
      ops.push_back({DeviceOp::Kind::kRead, rdma->dir + "ports/1/link_layer", {}});
      ops.push_back({DeviceOp::Kind::kRead, rdma->dir + "ports/1/state", {}});
      read.push_back(i);
    }
  }
  if (ops.empty()) {
    return answered(std::move(found));
  }
  const auto n = static_cast<int64_t>(read.size());
  return std::make_unique<StartedOnDevice<VfRdmaReads>>(
      finisher(sysfs_), sysfs_.start_on_device(pf.str(), std::move(ops), deadlines_.other * n),
      [found, read](const std::vector<DeviceOpResult>& got) {
        VfRdmaReads out = found;
        // Each read answered, or the call answered once for all of them: stuck (kStuck
        // last), or not made at all (no helper: its errno).
        const bool answered = got.size() == 2 * read.size();
        const int whole = got.empty() ? EIO : got.back().err;
        for (std::size_t k = 0; k < read.size(); ++k) {
          auto& vf = out[read[k]];
          if (!answered) {
            vf.err = whole;
            vf.unasked = whole != kStuck;
            continue;
          }
          vf.err = got[2 * k].err != 0 ? got[2 * k].err : got[2 * k + 1].err;
          vf.link_layer = read_text(got, 2 * k);
          vf.state = read_text(got, 2 * k + 1);
        }
        return out;
      });
}

std::unique_ptr<StartedCall<PortRead>> SysfsSriovCalls::start_read_port(
    const model::PciAddress& pf) {
  const auto dir = pf_dir(pf);
  PortRead read;
  if (!sysfs_.exists(dir + "vendor")) {
    read.vanished = true;
    return answered(std::move(read));
  }
  read.netdev = netdev_under(sysfs_, pf);
  const auto rdma = rdma_device_of(sysfs_, dir, read.netdev);
  if (!rdma) {
    return answered(std::move(read));
  }
  read.ib_device = rdma->name;
  read.rdma_over_netdev = rdma->over_netdev;
  const auto port = rdma->dir + "ports/1/";
  std::vector<DeviceOp> ops{{DeviceOp::Kind::kRead, port + "link_layer", {}},
                            {DeviceOp::Kind::kRead, port + "state", {}}};
  return std::make_unique<StartedOnDevice<PortRead>>(
      finisher(sysfs_), sysfs_.start_on_device(pf.str(), std::move(ops), deadlines_.other),
      [read](const std::vector<DeviceOpResult>& got) {
        PortRead out = read;
        // The first read that failed. A helper answers both reads (a failed read stops
        // nothing): fewer, and the call was not made or its helper died.
        out.unasked = got.size() < 2 && (got.empty() || got.back().err != kStuck);
        out.err = got.size() < 2 ? EIO : 0;
        for (const auto& r : got) {
          if (r.err != 0) {
            out.err = r.err;
            break;
          }
        }
        out.link_layer = read_text(got, 0);
        out.state = read_text(got, 1);
        return out;
      });
}

}  // namespace vfready::host
