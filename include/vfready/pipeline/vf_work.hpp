// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vfready/model/guid.hpp"
#include "vfready/model/pci_address.hpp"
#include "vfready/model/problem.hpp"
#include "vfready/model/status.hpp"

// A VF as its pass works on it: where it is, its netdev as last known, who else uses
// it, the GUID read back and the problems found so far. The steps read and change it;
// the VF's report (model::VfStatus) is written from it once, when the PF's pass ends
// (report()), and never read to decide what comes next.
namespace vfready::pipeline {

struct VfWork {
  uint16_t index = 0;
  model::PciAddress pci = model::PciAddress::from_parts(0, 0, 0, 0);
  int ifindex = 0;   // its netdev; 0 while none is known (not looked up, or gone)
  std::string name;  // that netdev's name, as last heard
  std::vector<std::string> altnames;
  model::VfUse in_use;              // set: left alone
  std::optional<model::Guid> guid;  // the GUID its port uses, read back
  std::optional<model::Mac> mac;    // an Ethernet VF's netdev address, read back
  // Its driver made that address up at probe (it could not reach the PF, as igbvf while
  // the PF resets), and then took the one the PF has: probed once more to have it from
  // the PF, as udev's MACAddressPolicy=persistent replaces an address marked random.
  bool mac_made_up = false;
  std::vector<model::Problem> problems;
  // False for a VF the pass did not get to judge (its PF failed first): shown as found.
  bool checked = true;
};

// Its report, as the pass leaves it.
model::VfStatus report(VfWork vf);

}  // namespace vfready::pipeline
