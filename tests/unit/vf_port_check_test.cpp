// SPDX-License-Identifier: Apache-2.0
// An Ethernet VF as its PF's driver reports it, against its MAC and the entry's settings.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "vfready/pipeline/steps.hpp"

namespace {

using testing::IsEmpty;
using vfready::host::VfPort;
using vfready::model::Mac;
using vfready::model::VfLinkState;
using vfready::model::VfPortConfig;
using vfready::model::VfTarget;

Mac mac(uint8_t last) { return Mac({0x06, 0, 0, 0x01, 0, last}); }

VfTarget vf(uint16_t index, std::optional<Mac> mac) {
  VfTarget vt;
  vt.index = index;
  vt.mac = mac;
  return vt;
}

VfPortConfig settings(std::optional<uint16_t> vlan, uint8_t qos, std::optional<bool> trust,
                      std::optional<bool> spoofchk, std::optional<VfLinkState> state) {
  VfPortConfig c;
  c.vlan = vlan;
  c.qos = qos;
  c.trust = trust;
  c.spoofchk = spoofchk;
  c.link_state = state;
  return c;
}

VfPort reported(uint32_t index, std::optional<Mac> mac, uint32_t vlan, uint32_t qos,
                std::optional<bool> spoofchk, std::optional<bool> trust,
                std::optional<VfLinkState> state) {
  VfPort p;
  p.vf = index;
  p.mac = mac;
  p.vlan = vlan;
  p.qos = qos;
  p.spoofchk = spoofchk;
  p.trust = trust;
  p.link_state = state;
  return p;
}

TEST(AVfPortCheck, FindsNothingWhenTheDriverReportsWhatWasSet) {
  const auto vt = vf(3, mac(3));
  const auto want = settings(10, 3, true, false, VfLinkState::kAuto);
  auto got = reported(3, mac(3), 10, 3, false, true, VfLinkState::kAuto);
  EXPECT_THAT(vfready::pipeline::vf_port_difference(vt, want, got), IsEmpty());
  // What the entry does not set is not compared.
  got.vlan = 20;
  got.trust = false;
  EXPECT_THAT(vfready::pipeline::vf_port_difference(vt, VfPortConfig(), got), IsEmpty());
}

TEST(AVfPortCheck, SaysEachDifferenceWithWhatWasPlanned) {
  const auto vt = vf(3, mac(3));
  const auto want = settings(10, 3, true, false, VfLinkState::kEnable);
  const auto got = reported(3, mac(9), 10, 0, true, false, VfLinkState::kDisable);
  EXPECT_EQ(vfready::pipeline::vf_port_difference(vt, want, got),
            "MAC 06:00:00:01:00:09, not 06:00:00:01:00:03, vlan 10 qos 0, not vlan 10 qos 3, "
            "spoof checking on, not off, trust off, not on, link state disable, not enable");
}

TEST(AVfPortCheck, TakesASettingItsDriverDoesNotReportAsSet) {
  const auto vt = vf(0, std::nullopt);
  const auto want = settings(std::nullopt, 0, true, false, VfLinkState::kEnable);
  const auto got = reported(0, std::nullopt, 0, 0, std::nullopt, std::nullopt, std::nullopt);
  EXPECT_THAT(vfready::pipeline::vf_port_difference(vt, want, got), IsEmpty());
}

}  // namespace
