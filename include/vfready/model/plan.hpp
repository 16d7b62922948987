// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "vfready/model/config.hpp"
#include "vfready/model/guid.hpp"
#include "vfready/model/if_name.hpp"
#include "vfready/model/inventory.hpp"
#include "vfready/model/pci_address.hpp"
#include "vfready/model/problem.hpp"
#include "vfready/model/result.hpp"

// The desired state: the config applied to the host found. Pure: no I/O.
namespace vfready::model {

struct VfTarget {
  uint16_t index = 0;
  std::optional<PciAddress> pci;
  std::optional<IfName> name;
  std::vector<AltName> altnames;
  std::optional<uint32_t> mtu;
  Guid guid{0};            // InfiniBand; 0 on Ethernet
  std::optional<Mac> mac;  // Ethernet: set through the PF before the VF's probe
};

struct PfTarget {
  PciAddress pci = PciAddress::from_parts(0, 0, 0, 0);
  std::string source;     // config file of the entry
  std::string json_path;  // "$.pfs[0]"
  uint16_t pf_index = 0;  // among all configured PFs, in PCI order
  bool present = false;   // found on the host
  uint16_t vfs = 0;
  LinkLayer link_layer = LinkLayer::kInfiniBand;
  bool require_port_active = true;
  GuidPolicy guid_policy = GuidPolicy::kFollow;
  VfPortConfig vf_port;  // Ethernet: the VF settings set with each MAC
  std::optional<IfName> name;
  std::vector<AltName> altnames;
  std::optional<uint32_t> mtu;
  std::vector<VfTarget> vf;       // one per VF, index order
  std::vector<Problem> problems;  // why this PF cannot be brought up, found at plan time
};

struct Plan {
  std::vector<PfTarget> pfs;  // PCI order
  // What the plan left out that an operator may not expect (a function of a selected
  // device ID with another link layer).
  std::vector<Problem> warnings;
};

// The functions a config may select: those it names by address, and any of the device
// IDs it selects by. The host's read makes device calls (a VF count, a port's state, VF
// GUIDs) for these only: a plan needs none of those of a function it does not select.
struct Selectable {
  std::set<PciAddress> pci;
  std::set<uint16_t> devices;
  [[nodiscard]] bool by_address(const PciAddress& function) const { return pci.contains(function); }
  [[nodiscard]] bool by_device(uint16_t device) const { return devices.contains(device); }
};
Selectable selectable(const Config& config);

// Selects the PFs, renders every name and assigns every GUID. Errors (a PF selected by
// two entries, a selector that finds nothing unless the entry is optional, a rendered
// name that is invalid, not unique, or held by a netdev vfready does not manage, a GUID
// pool too small, a GUID used twice) name the config file and JSON path. A device
// selector keeps to the entry's link layer. A configured PF that is absent, or lacks what its GUID
// scheme needs, is not an error here: it is a problem of that PF only.
Result<Plan> make_plan(const Config& config, const HostInfo& host);

// {pci} and {vf_pci} in names: the address with ':' written '-' (names cannot hold ':').
std::string pci_for_names(const PciAddress& pci);

}  // namespace vfready::model
