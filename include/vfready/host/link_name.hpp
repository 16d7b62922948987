// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>

namespace vfready::host {

// The name link `ifindex` has now in the caller's network namespace, nullopt when there
// is none; throws std::system_error when it cannot be asked (no socket). Asked with SIOCGIFNAME
// (if_indextoname), which the kernel answers under RCU without rtnl_lock (dev_ioctl() ->
// dev_ifname() -> netdev_get_name(), net/core): a driver that holds rtnl_lock does not hold it up,
// as it would a netlink lookup.
std::optional<std::string> link_name(int ifindex);

}  // namespace vfready::host
