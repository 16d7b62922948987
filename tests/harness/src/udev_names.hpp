// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "topology.hpp"

// The names udevd gives a netdev of a PCI function, as systemd's net_id builtin
// (src/udev/udev-builtin-net_id.c) makes them and its link config
// (src/udev/net/link-config.c, 99-default.link) picks among them. Pure: no I/O.
namespace vfready::fakehost {

// ID_NET_NAME_SLOT and ID_NET_NAME_PATH of a netdev: prefix ("ib" on InfiniBand, "en"
// otherwise), then the PCI location, then "v<N>" for VF N (named after its PF's
// location). A name that would not fit IFNAMSIZ is not made, as net_id drops it.
struct PredictableNames {
  std::optional<std::string> slot;  // "ibs<slot>[f<fn>][v<N>]", where the PF has a slot
  std::optional<std::string> path;  // "ib[P<domain>]p<bus>s<dev>[f<fn>][v<N>]"
};
PredictableNames predictable_names(const FunctionSpec& pf, std::optional<uint16_t> vf,
                                   bool infiniband);

// What udevd does to a netdev the kernel named `kernel_name` while it handles its add:
// the name it renames it to (nullopt: none) and the altnames it adds
// (AlternativeNamesPolicy=database onboard slot path, skipping the name it has then).
struct UdevNaming {
  std::optional<std::string> rename;
  std::vector<std::string> altnames;
};
UdevNaming udev_naming(NamePolicy policy, const PredictableNames& names,
                       const std::string& kernel_name);

}  // namespace vfready::fakehost
