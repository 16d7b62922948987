// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/guid_scheme.hpp"

#include <gtest/gtest.h>

#include <set>

using vfready::model::derive_vf_guid;
using vfready::model::Guid;

TEST(TheDerivedGuidScheme, IsLocallyAdministeredUnicastAndOutsideTheCommonPool) {
  const auto g = derive_vf_guid(Guid::parse("a088:c203:0030:1000").value(), 3);
  const auto first = static_cast<unsigned>(g.value() >> 56);
  EXPECT_EQ(first & 0x02u, 0x02u) << "locally administered";
  EXPECT_EQ(first & 0x01u, 0u) << "unicast";
  EXPECT_NE(first, 0x02u) << "ib-kubernetes' default pool starts with 02";
  EXPECT_TRUE(g.is_assignable());
}

TEST(TheDerivedGuidScheme, KeepsThePfExtensionAndTheVfIndexVisible) {
  const auto g = derive_vf_guid(Guid::parse("a088:c203:0030:1000").value(), 7);
  EXPECT_EQ(g.str().substr(6), "03:00:30:10:00:07");
}

TEST(TheDerivedGuidScheme, IsTheSameEveryTimeForTheSameHardware) {
  const auto pf = Guid::parse("a088:c203:0030:1000").value();
  EXPECT_EQ(derive_vf_guid(pf, 5), derive_vf_guid(pf, 5));
}

TEST(TheDerivedGuidScheme, NeverCollidesAcrossPfsOfOneVendorAndTheirVfs) {
  std::set<Guid> seen;
  // 64 PFs with consecutive GUIDs (as one vendor burns them), 256 VFs each.
  for (uint64_t pf = 0; pf < 64; ++pf) {
    for (uint16_t vf = 0; vf < 256; ++vf) {
      const auto g = derive_vf_guid(Guid{0xa088c20300301000ULL + pf}, vf);
      EXPECT_TRUE(seen.insert(g).second) << g.str();
      EXPECT_TRUE(g.is_assignable());
    }
  }
}

TEST(TheDerivedGuidScheme, NeverYieldsZeroOrAllOnesEvenFromExtremeInputs) {
  for (uint64_t pf : {0ULL, ~0ULL, 0x0000ffffffffffffULL, 0xffffff0000000000ULL}) {
    for (uint16_t vf : {0, 255}) {
      EXPECT_TRUE(derive_vf_guid(Guid{pf}, vf).is_assignable()) << pf << " " << vf;
    }
  }
}
