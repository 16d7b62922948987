// SPDX-License-Identifier: Apache-2.0
#include "rdma_devices.hpp"

namespace vfready::host {

std::optional<RdmaDevice> rdma_device_of(Sysfs& sysfs, const std::string& function_dir,
                                         const std::optional<std::string>& netdev) {
  const auto on_function = sysfs.list(function_dir + "infiniband");
  if (!on_function.empty()) {
    return RdmaDevice{on_function.front(), function_dir + "infiniband/" + on_function.front() + "/",
                      false};
  }
  if (!netdev || netdev->empty()) {
    return std::nullopt;
  }
  // Reading ndevs/N asks no driver: show_port_gid_attr_ndev() reads the GID cache
  // (drivers/infiniband/core/sysfs.c); an InfiniBand port's answers EINVAL.
  for (const auto& name : sysfs.list("class/infiniband")) {
    const auto dir = "class/infiniband/" + name + "/";
    const auto ndev = sysfs.read(dir + "ports/1/gid_attrs/ndevs/0");
    if (ndev && ndev.value() == *netdev) {
      return RdmaDevice{name, dir, true};
    }
  }
  return std::nullopt;
}

}  // namespace vfready::host
