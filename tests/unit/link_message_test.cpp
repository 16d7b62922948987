// SPDX-License-Identifier: Apache-2.0
// The one parser of link messages, on messages built as the kernel lays them out
// (rtnl_fill_ifinfo: ifinfomsg, then attributes; IFLA_PROP_LIST nested).
#include "vfready/host/link_message.hpp"

#include <gtest/gtest.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

using vfready::host::parse_link_message;

class Message {
 public:
  Message(uint16_t type, int ifindex, unsigned flags, uint8_t family = AF_UNSPEC) {
    nlmsghdr h{};
    h.nlmsg_type = type;
    append(&h, sizeof h);
    ifinfomsg info{};
    info.ifi_family = family;
    info.ifi_index = ifindex;
    info.ifi_flags = flags;
    append(&info, sizeof info);
  }
  Message& attr(uint16_t type, const void* data, std::size_t len) {
    rtattr rta{};
    rta.rta_type = type;
    rta.rta_len = static_cast<uint16_t>(RTA_LENGTH(len));
    append(&rta, sizeof rta);
    append(data, len);
    bytes_.resize(NLMSG_ALIGN(bytes_.size()));
    return *this;
  }
  Message& text(uint16_t type, const std::string& s) { return attr(type, s.c_str(), s.size() + 1); }
  Message& mtu(uint32_t mtu) { return attr(IFLA_MTU, &mtu, sizeof mtu); }
  Message& altnames(const std::vector<std::string>& names) {
    Message inner(0, 0, 0);
    inner.bytes_.clear();
    for (const auto& n : names) {
      inner.text(IFLA_ALT_IFNAME, n);
    }
    return attr(IFLA_PROP_LIST | NLA_F_NESTED, inner.bytes_.data(), inner.bytes_.size());
  }
  // IFLA_VFINFO_LIST, nested as rtnl_fill_vfinfo() nests it (no NLA_F_NESTED), of the
  // IFLA_VF_INFO entries given, each its attributes' bytes (Message::attributes()).
  Message& vfs(const std::vector<std::vector<uint8_t>>& infos) {
    Message list(0, 0, 0);
    list.bytes_.clear();
    for (const auto& info : infos) {
      list.attr(IFLA_VF_INFO, info.data(), info.size());
    }
    return attr(IFLA_VFINFO_LIST, list.bytes_.data(), list.bytes_.size());
  }
  // A Message of attributes only, for a nest.
  static Message attributes() {
    Message m(0, 0, 0);
    m.bytes_.clear();
    return m;
  }
  [[nodiscard]] const std::vector<uint8_t>& bytes() const { return bytes_; }
  std::vector<uint8_t> done() {
    auto out = bytes_;
    const auto len = static_cast<uint32_t>(out.size());
    std::memcpy(out.data(), &len, sizeof len);  // nlmsg_len comes first
    return out;
  }

 private:
  void append(const void* data, std::size_t len) {
    const auto* p = static_cast<const uint8_t*>(data);
    bytes_.insert(bytes_.end(), p, p + len);
  }
  std::vector<uint8_t> bytes_;
};

TEST(TheLinkMessageParser, TakesNameMtuFlagsAndAltnames) {
  const auto bytes = Message(RTM_NEWLINK, 7, IFF_UP)
                         .text(IFLA_IFNAME, "ib0v3")
                         .mtu(4092)
                         .altnames({"ibp24s0v3", "vfr3"})
                         .done();
  const auto m = parse_link_message(bytes);
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->removed);
  EXPECT_EQ(m->link.ifindex, 7);
  EXPECT_EQ(m->link.name, "ib0v3");
  EXPECT_EQ(m->link.mtu, 4092u);
  EXPECT_TRUE(m->link.up);
  EXPECT_EQ(m->link.altnames, (std::vector<std::string>{"ibp24s0v3", "vfr3"}));
}

// A bridge port's own message (br_ifinfo_notify(): AF_BRIDGE) has its name and MTU but no
// IFLA_PROP_LIST whatever its altnames: its family tells it from the link's own.
TEST(TheLinkMessageParser, TellsABridgePortsMessageByItsFamily) {
  const auto own =
      parse_link_message(Message(RTM_NEWLINK, 7, IFF_UP).text(IFLA_IFNAME, "ibs0").done());
  ASSERT_TRUE(own);
  EXPECT_EQ(own->family, AF_UNSPEC);
  const auto port = parse_link_message(
      Message(RTM_NEWLINK, 7, IFF_UP, AF_BRIDGE).text(IFLA_IFNAME, "ibs0").done());
  ASSERT_TRUE(port);
  EXPECT_EQ(port->family, AF_BRIDGE);
  EXPECT_EQ(port->link.name, "ibs0");
}

TEST(TheLinkMessageParser, StopsAtNameAndMtuWhenOnlyTheyAreWanted) {
  // As the kernel lays an event out: the name first, the MTU after a few, the altnames
  // near the end (after a large attribute, here a statistics block).
  const std::vector<uint8_t> stats(200, 0xab);
  const auto bytes = Message(RTM_NEWLINK, 7, IFF_UP)
                         .text(IFLA_IFNAME, "ib0v3")
                         .mtu(4092)
                         .attr(IFLA_STATS64, stats.data(), stats.size())
                         .altnames({"vfr3"})
                         .done();
  const auto brief = parse_link_message(bytes, vfready::host::LinkParts::kNameAndMtu);
  ASSERT_TRUE(brief);
  EXPECT_EQ(brief->link.name, "ib0v3");
  EXPECT_EQ(brief->link.mtu, 4092u);
  EXPECT_TRUE(brief->link.altnames.empty());  // not looked for
  const auto whole = parse_link_message(bytes);
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->link.altnames, std::vector<std::string>{"vfr3"});
  // The MTU before the name (not the kernel's order) is found all the same.
  const auto reversed = parse_link_message(
      Message(RTM_NEWLINK, 8, 0).mtu(1500).altnames({"a"}).text(IFLA_IFNAME, "n").done(),
      vfready::host::LinkParts::kNameAndMtu);
  ASSERT_TRUE(reversed);
  EXPECT_EQ(reversed->link.name, "n");
  EXPECT_EQ(reversed->link.mtu, 1500u);
}

TEST(TheLinkMessageParser, TellsARemovedLink) {
  const auto m = parse_link_message(Message(RTM_DELLINK, 9, 0).text(IFLA_IFNAME, "x").done());
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->removed);
  EXPECT_EQ(m->link.ifindex, 9);
  EXPECT_FALSE(m->link.up);
}

TEST(TheLinkMessageParser, RefusesOtherMessagesAndShortOnes) {
  EXPECT_FALSE(parse_link_message(Message(RTM_NEWADDR, 1, 0).done()));
  auto bytes = Message(RTM_NEWLINK, 1, 0).text(IFLA_IFNAME, "eth0").done();
  EXPECT_FALSE(parse_link_message(std::span(bytes).first(bytes.size() - 1)));
  EXPECT_FALSE(parse_link_message(std::span(bytes).first(10)));
}

TEST(TheLinkMessageParser, StopsAtAnAttributeLongerThanTheMessage) {
  auto bytes = Message(RTM_NEWLINK, 3, 0).text(IFLA_IFNAME, "a").mtu(1500).done();
  // The MTU attribute claims more than is there: the name is kept, the MTU is not read.
  const std::size_t mtu_at = bytes.size() - RTA_SPACE(sizeof(uint32_t));
  const uint16_t too_long = 200;
  std::memcpy(bytes.data() + mtu_at, &too_long, sizeof too_long);
  const auto m = parse_link_message(bytes);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->link.name, "a");
  EXPECT_EQ(m->link.mtu, 0u);
}

TEST(TheLinkMessageParser, ReadsANameWithoutItsNulUpToTheAttributesEnd) {
  const char name[4] = {'i', 'b', '0', 'x'};
  const auto m =
      parse_link_message(Message(RTM_NEWLINK, 2, 0).attr(IFLA_IFNAME, name, sizeof name).done());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->link.name, "ib0x");
}

}  // namespace

TEST(TheLinkMessageParser, TakesASixByteAddressAsTheLinksMac) {
  const uint8_t mac[6] = {0x06, 0x00, 0x00, 0x01, 0x00, 0x03};
  const uint8_t ipoib[20] = {0x00, 0x00, 0x10, 0x49};
  auto ether =
      Message(RTM_NEWLINK, 9, 0).text(IFLA_IFNAME, "eth0v3").attr(IFLA_ADDRESS, mac, 6).done();
  auto m = parse_link_message(ether);
  ASSERT_TRUE(m);
  ASSERT_TRUE(m->link.mac);
  EXPECT_EQ(m->link.mac->str(), "06:00:00:01:00:03");
  // An IPoIB address (20 bytes) is no MAC.
  auto ib =
      Message(RTM_NEWLINK, 9, 0).text(IFLA_IFNAME, "ibs0v3").attr(IFLA_ADDRESS, ipoib, 20).done();
  EXPECT_FALSE(parse_link_message(ib)->link.mac);
}

// A PF's VFs as its driver reports them: MAC (its first 6 bytes of 32), VLAN and QoS,
// spoof checking, trust and link state; a setting reported as -1 (the driver does not
// fill it in) is none; attributes not read (broadcast, rates) are passed over; an entry
// without IFLA_VF_MAC, which carries the VF's number, is left out.
TEST(TheLinkMessageParser, TakesAPfsVfsAsItsDriverReportsThem) {
  ifla_vf_mac mac0{.vf = 0, .mac = {0x06, 0x00, 0x00, 0x01, 0x00, 0x00}};
  ifla_vf_broadcast broadcast{};
  std::memset(broadcast.broadcast, 0xff, sizeof broadcast.broadcast);
  ifla_vf_vlan vlan0{.vf = 0, .vlan = 10, .qos = 3};
  ifla_vf_rate rate{.vf = 0, .min_tx_rate = 0, .max_tx_rate = 0};
  ifla_vf_spoofchk spoof0{.vf = 0, .setting = 0};
  ifla_vf_link_state state0{.vf = 0, .link_state = IFLA_VF_LINK_STATE_ENABLE};
  ifla_vf_trust trust0{.vf = 0, .setting = 1};
  auto vf0 = Message::attributes()
                 .attr(IFLA_VF_MAC, &mac0, sizeof mac0)
                 .attr(IFLA_VF_BROADCAST, &broadcast, sizeof broadcast)
                 .attr(IFLA_VF_VLAN, &vlan0, sizeof vlan0)
                 .attr(IFLA_VF_RATE, &rate, sizeof rate)
                 .attr(IFLA_VF_SPOOFCHK, &spoof0, sizeof spoof0)
                 .attr(IFLA_VF_LINK_STATE, &state0, sizeof state0)
                 .attr(IFLA_VF_TRUST, &trust0, sizeof trust0)
                 .bytes();
  ifla_vf_mac mac1{.vf = 1, .mac = {0x02, 0x00, 0x00, 0x00, 0x01, 0x01}};
  ifla_vf_spoofchk spoof1{.vf = 1, .setting = UINT32_MAX};
  ifla_vf_trust trust1{.vf = 1, .setting = UINT32_MAX};
  auto vf1 = Message::attributes()
                 .attr(IFLA_VF_MAC, &mac1, sizeof mac1)
                 .attr(IFLA_VF_SPOOFCHK, &spoof1, sizeof spoof1)
                 .attr(IFLA_VF_TRUST, &trust1, sizeof trust1)
                 .bytes();
  auto unnumbered = Message::attributes().attr(IFLA_VF_VLAN, &vlan0, sizeof vlan0).bytes();
  auto m = parse_link_message(
      Message(RTM_NEWLINK, 2, 0).text(IFLA_IFNAME, "enp1s0").vfs({vf0, vf1, unnumbered}).done());
  ASSERT_TRUE(m);
  ASSERT_EQ(m->link.vfs.size(), 2U);
  const auto& a = m->link.vfs[0];
  EXPECT_EQ(a.vf, 0U);
  ASSERT_TRUE(a.mac);
  EXPECT_EQ(a.mac->str(), "06:00:00:01:00:00");
  EXPECT_EQ(a.vlan, 10U);
  EXPECT_EQ(a.qos, 3U);
  EXPECT_EQ(a.spoofchk, std::optional(false));
  EXPECT_EQ(a.trust, std::optional(true));
  EXPECT_EQ(a.link_state, std::optional(vfready::model::VfLinkState::kEnable));
  const auto& b = m->link.vfs[1];
  EXPECT_EQ(b.vf, 1U);
  EXPECT_EQ(b.mac->str(), "02:00:00:00:01:01");
  EXPECT_EQ(b.vlan, 0U);
  EXPECT_FALSE(b.spoofchk);
  EXPECT_FALSE(b.trust);
  EXPECT_FALSE(b.link_state);
}
