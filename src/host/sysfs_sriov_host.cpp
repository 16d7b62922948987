// SPDX-License-Identifier: Apache-2.0
#include "vfready/host/sysfs_sriov_host.hpp"

#include <tuple>

#include "vfready/host/host_reader.hpp"

namespace vfready::host {

namespace {

std::string pf_dir(const model::PciAddress& pf) { return "bus/pci/devices/" + pf.str() + "/"; }

std::string ofed_dir(const model::PciAddress& pf, uint16_t index) {
  return pf_dir(pf) + "sriov/" + std::to_string(index) + "/";
}

}  // namespace

int SysfsSriovHost::device_write(DeviceCall call, const std::string& rel, std::string_view value) {
  // A write of sriov_numvfs waits for every VF's probe and is the one known to hang
  // forever on a wedged driver: it runs in a child process, which alone is left behind
  // in the kernel. The others wait on the same device lock but are not yet bounded.
  const auto where = call == DeviceCall::kNumVfs ? WriteIn::kChild : WriteIn::kThisThread;
  return sysfs_.write(rel, value, where);
}

std::optional<model::PfInfo> SysfsSriovHost::read_pf(const model::PciAddress& pf, bool with_vfs) {
  return host::read_pf(sysfs_, pf, with_vfs);
}

model::VfInfo SysfsSriovHost::read_vf(const model::PciAddress& pf, uint16_t index) {
  return host::read_vf(sysfs_, pf_dir(pf), index);
}

std::optional<model::PciAddress> SysfsSriovHost::vf_address(const model::PciAddress& pf,
                                                            uint16_t index) {
  return read_vf_address(sysfs_, pf_dir(pf), index);
}

bool SysfsSriovHost::has_ofed_sriov(const model::PciAddress& pf) {
  return sysfs_.exists(ofed_dir(pf, 0) + "port");
}

VfBinding SysfsSriovHost::vf_binding(const model::PciAddress& pf, uint16_t index) {
  const auto vf = read_vf_binding(sysfs_, pf_dir(pf), index);
  return {vf.netdev, vf.driver};
}

std::optional<model::Guid> SysfsSriovHost::vf_port_guid(const model::PciAddress& pf,
                                                        uint16_t index) {
  return read_vf_port_guid(sysfs_, pf_dir(pf), index);
}

std::optional<std::string> SysfsSriovHost::netdev_of(const model::PciAddress& function) {
  const auto names = sysfs_.list(pf_dir(function) + "net");
  return names.empty() ? std::nullopt : std::optional<std::string>(names.front());
}

std::optional<std::string> SysfsSriovHost::port_state(const model::PciAddress& pf,
                                                      const std::string& ib_device, int port) {
  auto state = sysfs_.read(pf_dir(pf) + "infiniband/" + ib_device + "/ports/" +
                           std::to_string(port) + "/state");
  return state ? std::optional<std::string>(state.value()) : std::nullopt;
}

NetdevDevice SysfsSriovHost::device_of_netdev(const std::string& netdev) {
  const auto device = "class/net/" + netdev + "/device";
  auto pci = sysfs_.link_target_name(device);
  if (!pci) {
    return {};  // a virtual device (veth, bridge)
  }
  return {std::move(pci), sysfs_.link_target_name(device + "/physfn")};
}

int SysfsSriovHost::set_autoprobe(const model::PciAddress& pf, bool on) {
  return device_write(DeviceCall::kAutoprobe, pf_dir(pf) + "sriov_drivers_autoprobe",
                      on ? "1" : "0");
}

int SysfsSriovHost::set_num_vfs(const model::PciAddress& pf, uint16_t count) {
  return device_write(DeviceCall::kNumVfs, pf_dir(pf) + "sriov_numvfs", std::to_string(count));
}

std::optional<OfedGuidError> SysfsSriovHost::set_vf_guid_ofed(const model::PciAddress& pf,
                                                              uint16_t index, model::Guid guid,
                                                              const std::string& policy) {
  using File = OfedGuidError::File;
  const auto dir = ofed_dir(pf, index);
  for (const auto& [file, name, value] :
       {std::tuple<File, const char*, std::string>{File::kNode, "node", guid.str()},
        {File::kPort, "port", guid.str()},
        {File::kPolicy, "policy", policy}}) {
    if (const int err = device_write(DeviceCall::kGuidFile, dir + name, value); err != 0) {
      return OfedGuidError{file, err};
    }
  }
  return std::nullopt;
}

int SysfsSriovHost::set_vf_guid_netlink(int pf_ifindex, uint16_t index, model::Guid guid) {
  return links_.set_vf_guids(pf_ifindex, index, guid, guid);
}

int SysfsSriovHost::probe_vf(const model::PciAddress& vf) {
  return device_write(DeviceCall::kProbe, "bus/pci/drivers_probe", vf.str());
}

int SysfsSriovHost::unbind_vf(const model::PciAddress& vf, const std::string& driver) {
  return device_write(DeviceCall::kUnbind, "bus/pci/drivers/" + driver + "/unbind", vf.str());
}

}  // namespace vfready::host
