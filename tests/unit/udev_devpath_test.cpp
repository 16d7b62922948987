// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "vfready/host/udev.hpp"

namespace {

// The function as text, "" for none.
std::string pci_of(std::string_view devpath) {
  const auto pci = vfready::host::pci_of_netdev_devpath(devpath);
  return pci ? pci->str() : "";
}

}  // namespace

TEST(ANetdevDevpath, NamesThePciFunctionItIsUnder) {
  EXPECT_EQ(pci_of("/devices/pci0000:00/0000:00:01.0/0000:10:00.1/net/ib0"), "0000:10:00.1");
  // An IPoIB child sits beside its parent, under the same function.
  EXPECT_EQ(pci_of("/devices/pci0000:00/0000:00:01.0/0000:10:00.1/net/ib0.8001"), "0000:10:00.1");
  // A VMD domain is wider than four digits.
  EXPECT_EQ(pci_of("/devices/pci10000:e0/10000:e0:06.0/10000:e1:00.0/net/ib1"), "10000:e1:00.0");
}

TEST(ANetdevDevpath, IsNoFunctionsForAVirtualOrOtherDevice) {
  EXPECT_EQ(pci_of("/devices/virtual/net/veth0"), "");
  EXPECT_EQ(pci_of("/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0/net/usb0"), "");
  EXPECT_EQ(pci_of("/net/ib0"), "");
  EXPECT_EQ(pci_of(""), "");
}

TEST(ANetdevDevpath, TakesOnlyWhatParsesAsAFunctionWhateverItsSpelling) {
  // Upper case is read (and written as vfready writes addresses); a device past 1f, a
  // function past 7 or a part not hex is no function.
  EXPECT_EQ(pci_of("/devices/pci0000:00/0000:AB:1F.7/net/ib0"), "0000:ab:1f.7");
  EXPECT_EQ(pci_of("/devices/pci0000:00/0000:ab:20.0/net/ib0"), "");
  EXPECT_EQ(pci_of("/devices/pci0000:00/0000:ab:1f.8/net/ib0"), "");
  EXPECT_EQ(pci_of("/devices/pci0000:00/0000:ag:00.0/net/ib0"), "");
  EXPECT_EQ(pci_of("/devices/pci0000:00/000g:ab:00.0/net/ib0"), "");
}
