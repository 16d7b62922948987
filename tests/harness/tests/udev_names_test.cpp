// SPDX-License-Identifier: Apache-2.0
// The names udevd gives a netdev (udev_names.hpp): pure, no root.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "udev_names.hpp"

using testing::ElementsAre;
using testing::IsEmpty;
using vfready::fakehost::FunctionSpec;
using vfready::fakehost::NamePolicy;
using vfready::fakehost::predictable_names;
using vfready::fakehost::udev_naming;
using vfready::model::PciAddress;

namespace {

FunctionSpec function(const char* pci, std::optional<std::string> slot = std::nullopt) {
  FunctionSpec f{.pci = PciAddress::parse(pci).value(), .vendor = "0x15b3", .device = "0x1021"};
  f.slot = std::move(slot);
  return f;
}

}  // namespace

TEST(PredictableNames, AreThePfsLocationWithTheVfNumber) {
  const auto names = predictable_names(function("0000:18:00.0", "3"), 5, true);
  EXPECT_EQ(names.path, "ibp24s0v5");
  EXPECT_EQ(names.slot, "ibs3v5");
  EXPECT_EQ(predictable_names(function("0000:18:00.0"), std::nullopt, true).path, "ibp24s0");
  EXPECT_FALSE(predictable_names(function("0000:18:00.0"), 5, true).slot) << "no slot, no name";
}

TEST(PredictableNames, CarryFunctionDomainAndPrefix) {
  EXPECT_EQ(predictable_names(function("0000:18:00.1"), 2, true).path, "ibp24s0f1v2");
  EXPECT_EQ(predictable_names(function("0001:18:00.0"), 2, true).path, "ibP1p24s0v2");
  EXPECT_EQ(predictable_names(function("0000:18:00.0"), 2, false).path, "enp24s0v2");
}

TEST(PredictableNames, DropANameLongerThanFifteenBytes) {
  EXPECT_FALSE(predictable_names(function("0001:c8:1f.7"), 127, true).path);  // ibP1p200s31f7v127
  EXPECT_EQ(predictable_names(function("0000:c8:1f.7"), 127, true).path, "ibp200s31f7v127");
}

TEST(UdevNaming, RenamesByThePolicyAndAddsTheOtherNamesAsAltnames) {
  const auto names = predictable_names(function("0000:18:00.0", "3"), 0, true);
  auto path = udev_naming(NamePolicy::kPath, names, "ib0");
  EXPECT_EQ(path.rename, "ibp24s0v0");
  EXPECT_THAT(path.altnames, ElementsAre("ibs3v0"));
  auto slot = udev_naming(NamePolicy::kSlot, names, "ib0");
  EXPECT_EQ(slot.rename, "ibs3v0");
  EXPECT_THAT(slot.altnames, ElementsAre("ibp24s0v0"));
  auto keep = udev_naming(NamePolicy::kKeep, names, "ib0");
  EXPECT_FALSE(keep.rename);
  EXPECT_THAT(keep.altnames, ElementsAre("ibs3v0", "ibp24s0v0"));
  auto none = udev_naming(NamePolicy::kNone, names, "ib0");
  EXPECT_FALSE(none.rename);
  EXPECT_THAT(none.altnames, IsEmpty());
}

TEST(UdevNaming, FallsBackToThePathNameWithoutASlotAndSkipsTheNameItHas) {
  const auto names = predictable_names(function("0000:18:00.0"), 0, true);
  auto slot = udev_naming(NamePolicy::kSlot, names, "ib0");
  EXPECT_EQ(slot.rename, "ibp24s0v0");
  EXPECT_THAT(slot.altnames, IsEmpty());
  auto named = udev_naming(NamePolicy::kPath, names, "ibp24s0v0");
  EXPECT_FALSE(named.rename) << "it has that name already";
  EXPECT_THAT(named.altnames, IsEmpty());
}
