// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace vfready::host {

// The name link `ifindex` has now in the caller's network namespace, nullopt when there
// is none; throws std::system_error when it cannot be asked (no socket). Asked with SIOCGIFNAME
// (if_indextoname), which the kernel answers under RCU without rtnl_lock (dev_ioctl() ->
// dev_ifname() -> netdev_get_name(), net/core): a driver that holds rtnl_lock does not hold it up,
// as it would a netlink lookup.
std::optional<std::string> link_name(int ifindex);

// The MTU link `name` has now, nullopt when there is no such link (or it cannot be
// asked). SIOCGIFMTU, answered under RCU as SIOCGIFNAME is (dev_ioctl() ->
// dev_ifsioc_locked(), net/core/dev_ioctl.c). `name`: one link_name() has just given, so
// that dev_load() finds it and asks for no module.
std::optional<uint32_t> link_mtu(const std::string& name);

}  // namespace vfready::host
