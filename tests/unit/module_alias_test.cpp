// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/module_alias.hpp"

#include <gtest/gtest.h>

namespace {

using vfready::model::pci_module_for;

// Lines as depmod writes them (Debian's 6.12 modules.alias).
constexpr const char* kAliases =
    "alias pci:v*d*sv*sd*bc*sc*i* vfio_pci\n"
    "alias pci:v00008086d000010C9sv*sd*bc*sc*i* igb\n"
    "alias pci:v00008086d000010CAsv*sd*bc*sc*i* igbvf\n"
    "alias pci:v000015B3d0000101Esv*sd*bc*sc*i* mlx5_core\n"
    "alias pci:v000014E4d000016DCsv*sd*bc*sc*i* bnxt_en\n"
    "alias pci:v00008086d*sv*sd*bc02sc00i* e1000\n";

TEST(PciModuleFor, FindsTheModuleThatNamesTheExactIds) {
  EXPECT_EQ(pci_module_for(kAliases, 0x8086, 0x10ca), "igbvf");
  EXPECT_EQ(pci_module_for(kAliases, 0x15b3, 0x101e), "mlx5_core");
  EXPECT_EQ(pci_module_for(kAliases, 0x14e4, 0x16dc), "bnxt_en");
}

TEST(PciModuleFor, IgnoresWildcardsAndOtherIdsAndBadLines) {
  EXPECT_FALSE(pci_module_for(kAliases, 0x8086, 0x1234));  // only a wildcard line names it
  EXPECT_FALSE(pci_module_for(kAliases, 0x1af4, 0x1041));
  EXPECT_FALSE(pci_module_for("alias pci:v00008086d000010CA\n", 0x8086, 0x10ca));
  EXPECT_FALSE(pci_module_for("alias pci:v00008086d000010CAsv* \n", 0x8086, 0x10ca));
  EXPECT_FALSE(pci_module_for("", 0x8086, 0x10ca));
  EXPECT_EQ(pci_module_for("ALIAS PCI:V00008086D000010CASV*SD*BC*SC*I* igbvf", 0x8086, 0x10ca),
            "igbvf");
}

}  // namespace
