// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/pci_address.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using testing::HasSubstr;
using vfready::model::PciAddress;

TEST(APciAddress, ParsesTheSysfsFormAndPrintsItBack) {
  auto a = PciAddress::parse("0000:18:00.0");
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->str(), "0000:18:00.0");
  EXPECT_EQ(a->domain(), 0u);
  EXPECT_EQ(a->bus(), 0x18);
  EXPECT_EQ(a->device(), 0);
  EXPECT_EQ(a->function(), 0);
}

TEST(APciAddress, NormalisesCaseAndTheShortForm) {
  EXPECT_EQ(PciAddress::parse("0000:AA:1F.7")->str(), "0000:aa:1f.7");
  EXPECT_EQ(PciAddress::parse("c0:00.1")->str(), "0000:c0:00.1");
  EXPECT_EQ(PciAddress::parse("10000:01:00.0")->str(), "10000:01:00.0");
  EXPECT_EQ(PciAddress::parse("ffffffff:ff:1f.7")->text().view(), "ffffffff:ff:1f.7");
  EXPECT_EQ(PciAddress::parse("0000:18:00.1")->text().view(), "0000:18:00.1");
  EXPECT_EQ(PciAddress::parse("ffffffff:ff:1f.7")->str(), "ffffffff:ff:1f.7");
  EXPECT_EQ(PciAddress::parse("0001:00:00.0")->str(), "0001:00:00.0");
}

TEST(APciAddress, ComputesRoutingIdsBothWays) {
  auto pf = PciAddress::parse("0000:18:00.0").value();
  EXPECT_EQ(pf.routing_id(), 0x1800);
  // First VF of a PF with offset 1, stride 1; and the ninth VF crossing into device 1.
  EXPECT_EQ(PciAddress::from_routing_id(0, pf.routing_id() + 1)->str(), "0000:18:00.1");
  EXPECT_EQ(PciAddress::from_routing_id(0, pf.routing_id() + 9)->str(), "0000:18:01.1");
  auto beyond = PciAddress::from_routing_id(0, 0x10000);
  ASSERT_FALSE(beyond);
  EXPECT_THAT(beyond.error().message, HasSubstr("65536"));
}

TEST(APciAddress, OrdersByDomainBusDeviceFunction) {
  EXPECT_LT(PciAddress::parse("0000:18:00.0").value(), PciAddress::parse("0000:18:00.1").value());
  EXPECT_LT(PciAddress::parse("0000:18:01.0").value(), PciAddress::parse("0000:29:00.0").value());
  EXPECT_LT(PciAddress::parse("0000:ff:00.0").value(), PciAddress::parse("0001:00:00.0").value());
}

TEST(APciAddress, ShowsAStrayNewlineInItsMessage) {
  auto a = PciAddress::parse("0000:18:00.0\n");
  ASSERT_FALSE(a);
  EXPECT_THAT(a.error().message, HasSubstr(R"("0000:18:00.0\n")"));
}

struct BadAddress {
  const char* text;
  const char* why;
  friend void PrintTo(const BadAddress& b, std::ostream* os) { *os << '"' << b.text << '"'; }
};

class APciAddressRejects : public testing::TestWithParam<BadAddress> {};

TEST_P(APciAddressRejects, WithAMessageNamingTheInputAndTheForm) {
  auto a = PciAddress::parse(GetParam().text);
  ASSERT_FALSE(a) << GetParam().text;
  EXPECT_THAT(a.error().message, HasSubstr(std::string("\"") + GetParam().text + "\""));
  EXPECT_THAT(a.error().message, HasSubstr(GetParam().why));
  EXPECT_THAT(a.error().message, HasSubstr("0000:18:00.0"));
}

INSTANTIATE_TEST_SUITE_P(
    BadInput, APciAddressRejects,
    testing::Values(BadAddress{"", "missing"}, BadAddress{"mlx5_0", "missing"},
                    BadAddress{"0000:18:00", "missing"}, BadAddress{"0000:18:00.8", "function"},
                    BadAddress{"0000:18:20.0", "device"}, BadAddress{"0000:1:00.0", "bus"},
                    BadAddress{"0000:18:0.0", "device"}, BadAddress{"zz:18:00.0", "domain"},
                    BadAddress{"000000000:18:00.0", "domain"},
                    BadAddress{"0000:18:00.-", "function"}),
    [](const testing::TestParamInfo<BadAddress>& info) {
      return "case" + std::to_string(info.index);
    });
