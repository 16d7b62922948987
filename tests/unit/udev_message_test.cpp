// SPDX-License-Identifier: Apache-2.0
#include "vfready/host/udev_message.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

using vfready::host::parse_udev_message;

namespace {

constexpr const char* kDevpath = "/devices/pci0000:00/0000:00:01.0/0000:18:00.2/net/ibp24s0v0";

// A message as udevd sends it: the 40-byte header (magic in network order, the offset of
// the properties in the host's), then `properties`, each ended by a NUL.
std::vector<uint8_t> message(const std::vector<std::string>& properties) {
  std::vector<uint8_t> out(40, 0);
  std::memcpy(out.data(), "libudev", 8);
  const uint8_t magic[4] = {0xfe, 0xed, 0xca, 0xfe};
  std::memcpy(out.data() + 8, magic, 4);
  const uint32_t size = 40;
  std::memcpy(out.data() + 12, &size, 4);
  std::memcpy(out.data() + 16, &size, 4);
  for (const auto& p : properties) {
    out.insert(out.end(), p.begin(), p.end());
    out.push_back(0);
  }
  return out;
}

std::vector<std::string> an_add() {
  return {"ACTION=add",    std::string("DEVPATH=") + kDevpath,
          "SUBSYSTEM=net", "INTERFACE=ibp24s0v0",
          "IFINDEX=42",    "SEQNUM=7"};
}

}  // namespace

TEST(AUdevMessage, NamesTheNetdevItsActionAndWhereItIs) {
  const auto e = parse_udev_message(message(an_add()));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->action, "add");
  EXPECT_EQ(e->ifindex, 42);
  EXPECT_EQ(e->name, "ibp24s0v0");
  EXPECT_EQ(e->devpath, kDevpath);
}

TEST(AUdevMessage, TakesTheLastOfAKeyGivenTwiceAndCutsAValueAtANewline) {
  auto p = an_add();
  p.emplace_back("ACTION=move\ntrailing");
  p.emplace_back("SOMETHING=else=with=equals");
  const auto e = parse_udev_message(message(p));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->action, "move");
}

TEST(AUdevMessage, ChecksEachValueAsItIsGivenNotOnlyTheLast) {
  // systemd refuses a message at the first value it cannot take, whatever follows.
  for (const auto& [first, then] : std::vector<std::pair<std::string, std::string>>{
           {"IFINDEX=abc", "IFINDEX=5"},
           {"SEQNUM=0", "SEQNUM=7"},
           {"ACTION=explode", "ACTION=add"},
           {"DEVPATH=relative", "DEVPATH=/devices/virtual/net/x"}}) {
    auto p = an_add();
    p.push_back(first);
    p.push_back(then);
    EXPECT_FALSE(parse_udev_message(message(p))) << first;
  }
}

TEST(AUdevMessage, CutsAValueAtACarriageReturnAndSimplifiesItsDevpath) {
  auto p = an_add();
  p.emplace_back("IFINDEX=7\r");
  p.emplace_back("DEVPATH=/devices//pci0000:00/./0000:18:00.2/net/ib3/\r");
  const auto e = parse_udev_message(message(p));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->ifindex, 7);
  EXPECT_EQ(e->devpath, "/devices/pci0000:00/0000:18:00.2/net/ib3");
  EXPECT_EQ(e->name, "ib3");
}

TEST(AUdevMessage, IsNothingWithoutUdevdsPrefixAndMagic) {
  auto m = message(an_add());
  m[0] = 'L';
  EXPECT_FALSE(parse_udev_message(m));
  m = message(an_add());
  m[11] = 0xff;  // the magic's last byte
  EXPECT_FALSE(parse_udev_message(m));
  // The kernel's own uevent: "add@/devices/...", then the properties.
  const std::string kernel = std::string("add@") + kDevpath + '\0' + "ACTION=add" + '\0';
  EXPECT_FALSE(
      parse_udev_message({reinterpret_cast<const uint8_t*>(kernel.data()), kernel.size()}));
}

TEST(AUdevMessage, IsNothingWhenItsPropertiesAreNotInTheBytes) {
  auto m = message(an_add());
  const uint32_t past = static_cast<uint32_t>(m.size()) - 31;  // 32 bytes must follow
  std::memcpy(m.data() + 16, &past, 4);
  EXPECT_FALSE(parse_udev_message(m));
  const uint32_t huge = 0xfffffff0;
  std::memcpy(m.data() + 16, &huge, 4);
  EXPECT_FALSE(parse_udev_message(m));
  EXPECT_FALSE(parse_udev_message(std::vector<uint8_t>(m.begin(), m.begin() + 31)));
}

TEST(AUdevMessage, IsNothingWhenAPropertyIsNotEndedOrHasNoEquals) {
  auto m = message(an_add());
  m.pop_back();  // the last NUL
  EXPECT_FALSE(parse_udev_message(m));
  auto p = an_add();
  p.emplace_back("NOEQUALS");
  EXPECT_FALSE(parse_udev_message(message(p)));
  // A newline before the '=' cuts it off (truncate_nl()), in a property vfready does not
  // read as in one it does; after it, only the value is cut.
  for (const std::string cut : {"ID_NET_NAME\n=x", "ID\rX=y", "ACT\nION=add"}) {
    auto q = an_add();
    q.push_back(cut);
    EXPECT_FALSE(parse_udev_message(message(q))) << cut;
  }
  auto fine = an_add();
  fine.emplace_back("ID_NET_NAME=x\n=y");
  EXPECT_TRUE(parse_udev_message(message(fine)));
}

TEST(AUdevMessage, IsNothingWithoutWhatUdevdAlwaysSends) {
  for (const std::string key : {"ACTION=", "DEVPATH=", "SUBSYSTEM=", "SEQNUM="}) {
    auto p = an_add();
    std::erase_if(p, [&](const std::string& s) { return s.starts_with(key); });
    EXPECT_FALSE(parse_udev_message(message(p))) << "without " << key;
  }
  for (const std::string bad : {"ACTION=explode", "SEQNUM=0", "SEQNUM=7x", "DEVPATH=devices/x",
                                "DEVPATH=/", "DEVPATH=//"}) {
    auto p = an_add();
    p.push_back(bad);
    EXPECT_FALSE(parse_udev_message(message(p))) << bad;
  }
}

TEST(AUdevMessage, IsNothingForADeviceThatIsNotANetdev) {
  auto p = an_add();
  p.emplace_back("SUBSYSTEM=pci");
  EXPECT_FALSE(parse_udev_message(message(p)));
  for (const std::string bad : {"IFINDEX=0", "IFINDEX=-3", "IFINDEX=", "IFINDEX=99999999999"}) {
    p = an_add();
    p.push_back(bad);
    EXPECT_FALSE(parse_udev_message(message(p))) << bad;
  }
  p = an_add();
  std::erase_if(p, [](const std::string& s) { return s.starts_with("IFINDEX="); });
  EXPECT_FALSE(parse_udev_message(message(p)));
}
