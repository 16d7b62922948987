// SPDX-License-Identifier: Apache-2.0
#include "vfready/host/sysfs_sriov_calls.hpp"

#include <cerrno>
#include <functional>
#include <string_view>
#include <vector>

#include "attribute_reads.hpp"
#include "sysfs_sriov_parts.hpp"
#include "vfready/host/host_reader.hpp"
#include "vfready/host/links.hpp"
#include "vfready/host/started_on_device.hpp"

namespace vfready::host {

namespace {

// A VF's three OFED files, in the order they are written (a call stops at a failure).
constexpr OfedGuidError::File kOfedFiles[] = {
    OfedGuidError::File::kNode, OfedGuidError::File::kPort, OfedGuidError::File::kPolicy};

int last_err(const std::vector<DeviceOpResult>& got) { return got.back().err; }

// The VFs' OFED files as paths under the PF's sriov/ ("12/node"): short enough to take
// no memory of their own.
std::vector<DeviceOp> ofed_ops(std::span<const std::pair<uint16_t, model::Guid>> vfs,
                               model::GuidPolicy policy) {
  std::vector<DeviceOp> ops;
  ops.reserve(3 * vfs.size());
  const std::string policy_text(model::to_string(policy));
  for (const auto& [index, guid] : vfs) {
    const auto dir = std::to_string(index);
    const auto text = guid.text();
    ops.push_back({DeviceOp::Kind::kWrite, dir + "/node", text.str()});
    ops.push_back({DeviceOp::Kind::kWrite, dir + "/port", text.str()});
    ops.push_back({DeviceOp::Kind::kWrite, dir + "/policy", policy_text});
  }
  return ops;
}

}  // namespace

std::optional<StuckCall> SysfsSriovCalls::stuck(const model::PciAddress& pf) {
  // A link request stuck on rtnl_lock holds up every PF's naming as well.
  auto call = sysfs_.stuck(pf.str());
  return call ? call : sysfs_.stuck(kLinksKey);
}

// sriov_drivers_autoprobe_store() (drivers/pci/iov.c) sets a flag of the PF and takes
// no lock a driver could hold (not the device lock, as sriov_numvfs does): written here,
// by the caller, not through a helper. So it is also written for a PF stuck in a call.
int SysfsSriovCalls::set_autoprobe(const model::PciAddress& pf, bool on) {
  return sysfs_.write(pf_dir(pf) + "sriov_drivers_autoprobe", on ? "1" : "0");
}

namespace {

// What a call writing `vfs` VFs' OFED files answered: an error slot for each VF it
// reached. It stops at the first failed write; the VFs after it are the caller's to
// write again.
OfedGuidErrors ofed_errors(std::size_t vfs, const std::vector<DeviceOpResult>& got) {
  OfedGuidErrors out(vfs);
  std::size_t reached = 0;
  for (std::size_t i = 0; i < got.size() && i / 3 < vfs; ++i) {
    if (got[i].err != 0) {
      out[i / 3] = OfedGuidError{kOfedFiles[i % 3], got[i].err};
      reached = i / 3 + 1;
      break;
    }
    reached = (i + 1) / 3;
  }
  if (reached == 0 && vfs > 0) {
    // The call answered no op of the first VF: its file could not be written.
    out[0] = OfedGuidError{kOfedFiles[got.size() % 3], EIO};
    reached = 1;
  }
  out.resize(reached);
  return out;
}

}  // namespace

std::unique_ptr<StartedCall<OfedGuidErrors>> SysfsSriovCalls::start_set_vf_guids_ofed(
    const model::PciAddress& pf, std::span<const std::pair<uint16_t, model::Guid>> vfs,
    model::GuidPolicy policy) {
  // Each VF's three files within the bound one VF's have on their own.
  auto call = sysfs_.start_on_device_under(pf.str(), pf_dir(pf) + "sriov", ofed_ops(vfs, policy),
                                           deadlines_.other * static_cast<int64_t>(vfs.size()));
  return std::make_unique<StartedOnDevice<OfedGuidErrors>>(
      finisher(sysfs_), std::move(call),
      [count = vfs.size()](const std::vector<DeviceOpResult>& got) {
        return ofed_errors(count, got);
      });
}

std::unique_ptr<StartedCall<int>> SysfsSriovCalls::start_set_num_vfs(const model::PciAddress& pf,
                                                                     uint16_t count) {
  return std::make_unique<StartedOnDevice<int>>(
      finisher(sysfs_),
      sysfs_.start_on_device(
          pf.str(), {{DeviceOp::Kind::kWrite, pf_dir(pf) + "sriov_numvfs", std::to_string(count)}},
          deadlines_.numvfs),
      last_err);
}

namespace {

// A VF's probe: written to a drivers_probe its helper keeps open. Under bus/pci.
std::vector<DeviceOp> probe_ops(const model::PciAddress& vf) {
  return {{DeviceOp::Kind::kWrite, "drivers_probe", vf.str(), /*keep_open=*/true}};
}

// What a VF's probe did, in one helper round trip: the VF's uevent (DRIVER= while a
// driver has it: dev_uevent()) and OFED's view of the GUID its port took. Paths under
// bus/pci.
std::vector<DeviceOp> read_back_ops(const model::PciAddress& pf, const model::PciAddress& vf,
                                    uint16_t index, bool ofed) {
  // "devices/<function>" and `tail`, made in one allocation.
  const auto in_devices = [](const model::PciAddress& function, std::string_view tail) {
    constexpr std::string_view kDevices = "devices/";
    const auto name = function.text();
    std::string out;
    out.reserve(kDevices.size() + name.view().size() + tail.size());
    return out.append(kDevices).append(name.view()).append(tail);
  };
  std::vector<DeviceOp> ops;
  ops.reserve(2);
  ops.push_back({DeviceOp::Kind::kRead, in_devices(vf, "/uevent"), {}});
  if (ofed) {
    const auto port = "/sriov/" + std::to_string(index) + "/port";  // short: in place
    ops.push_back({DeviceOp::Kind::kRead, in_devices(pf, port), {}});
  }
  return ops;
}

constexpr std::string_view kPciBus = "bus/pci";

}  // namespace

ProbedVf SysfsSriovCalls::probed(const model::PciAddress& pf, uint16_t index,
                                 const std::vector<DeviceOpResult>& got) {
  ProbedVf out{.err = 0, .bound = false, .driver = {}, .guid = std::nullopt};
  // No uevent (ENOENT, ENODEV): the VF is gone, so nothing has it. Not read: why (kStuck:
  // the PF is stuck; EIO: no answer, which DeviceCalls never gives).
  const int err = got.empty() ? EIO : got.front().err;
  if (err != 0) {
    out.err = err == ENOENT || err == ENODEV ? 0 : err;
    return out;
  }
  const auto& uevent = got.front().text;
  const auto at = uevent.starts_with("DRIVER=") ? 0 : uevent.find("\nDRIVER=");
  if (at == std::string::npos) {
    return out;
  }
  const auto from = uevent.find('=', at) + 1;
  out.driver = uevent.substr(from, uevent.find('\n', from) - from);
  out.bound = true;
  // Without sriov/<n>/port (not asked for, or ENOENT) its RDMA device tells, as
  // vf_port_guid reads it without OFED (no device call: the file was just asked for).
  if (got.size() >= 2 && got[1].err != 0 && got[1].err != ENOENT) {
    out.err = got[1].err;  // the port's GUID not read (kStuck: the PF is stuck)
    out.port_unread = true;
    return out;
  }
  out.guid = got.size() < 2 || got[1].err == ENOENT
                 ? read_vf_port_guid(sysfs_, pf, index, /*ofed=*/false)
                 : parsed_guid(got[1]);
  return out;
}

std::unique_ptr<StartedCall<int>> SysfsSriovCalls::start_probe_vf(const model::PciAddress& pf,
                                                                  const model::PciAddress& vf) {
  return std::make_unique<StartedOnDevice<int>>(
      finisher(sysfs_),
      sysfs_.start_on_device_under(pf.str(), kPciBus, probe_ops(vf), deadlines_.probe), last_err);
}

std::unique_ptr<StartedProbe> SysfsSriovCalls::start_read_probed_vf(const model::PciAddress& pf,
                                                                    const model::PciAddress& vf,
                                                                    uint16_t index, bool ofed) {
  // The answer, read by the host that started it (vf_port_guid for a VF without OFED's
  // port file).
  return std::make_unique<StartedOnDevice<ProbedVf>>(
      finisher(sysfs_),
      sysfs_.start_on_device_under(pf.str(), kPciBus, read_back_ops(pf, vf, index, ofed),
                                   deadlines_.other),
      [this, pf, index](const std::vector<DeviceOpResult>& got) { return probed(pf, index, got); });
}

std::unique_ptr<StartedCall<ReadGuids>> SysfsSriovCalls::start_read_vf_guids(
    const model::PciAddress& pf, std::span<const uint16_t> indices, bool ofed) {
  std::vector<uint16_t> vfs(indices.begin(), indices.end());
  const auto from_rdma = [this, pf](uint16_t index) {
    return read_vf_port_guid(sysfs_, pf, index, /*ofed=*/false);
  };
  if (!ofed || vfs.empty()) {
    ReadGuids out;
    out.reserve(vfs.size());
    for (const auto index : vfs) {
      out.push_back(from_rdma(index));
    }
    return answered(std::move(out));
  }
  std::vector<DeviceOp> ops;
  ops.reserve(vfs.size());
  for (const auto index : vfs) {
    ops.push_back({DeviceOp::Kind::kRead, ofed_dir(pf, index) + "port", {}});
  }
  return std::make_unique<StartedOnDevice<ReadGuids>>(
      finisher(sysfs_),
      sysfs_.start_on_device(pf.str(), std::move(ops),
                             deadlines_.other * static_cast<int64_t>(vfs.size())),
      [vfs, from_rdma](const std::vector<DeviceOpResult>& got) {
        ReadGuids out(vfs.size());
        for (std::size_t i = 0; i < got.size() && i < vfs.size(); ++i) {
          out[i] = got[i].err == ENOENT ? from_rdma(vfs[i]) : parsed_guid(got[i]);
        }
        return out;
      });
}

std::unique_ptr<StartedCall<int>> SysfsSriovCalls::start_unbind_vf(const model::PciAddress& pf,
                                                                   const model::PciAddress& vf,
                                                                   const std::string& driver) {
  return std::make_unique<StartedOnDevice<int>>(
      finisher(sysfs_),
      sysfs_.start_on_device(
          pf.str(), {{DeviceOp::Kind::kWrite, "bus/pci/drivers/" + driver + "/unbind", vf.str()}},
          deadlines_.other),
      last_err);
}

}  // namespace vfready::host
