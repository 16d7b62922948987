// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/config.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using testing::HasSubstr;
using vfready::model::ConfigSource;
using vfready::model::GuidScheme;
using vfready::model::LinkLayer;
using vfready::model::parse_config;

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const char* kMinimal = R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 8}]})";

}  // namespace

TEST(TheReferenceConfig, ParsesAndSelectsTheEightInfinibandPfsByAddress) {
  const std::string path = VFREADY_CONFIG_DIR "/vfready.json";
  auto c = parse_config({{path, read(path)}});
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(c->pfs.size(), 1u);
  const auto& pf = c->pfs[0];
  EXPECT_EQ(pf.select.pci.size(), 8u);
  EXPECT_EQ(pf.vfs, 8);
  EXPECT_EQ(pf.link_layer, LinkLayer::kInfiniBand);
  EXPECT_EQ(pf.guid.scheme, GuidScheme::kDerived);
  EXPECT_TRUE(pf.vf_name.has_value());
  EXPECT_EQ(pf.source, path);
  EXPECT_EQ(pf.json_path, "$.pfs[0]");
}

TEST(AConfig, HasDefaultsForWhatItDoesNotSay) {
  auto c = parse_config({{"main.json", kMinimal}});
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_TRUE(c->ready_when_degraded);
  EXPECT_EQ(c->timeouts.numvfs_ms, 120000u);
  EXPECT_EQ(c->timeouts.modules_ms, 30000u);
  EXPECT_EQ(c->publish.status_file, "/run/vfready/status.json");
  EXPECT_EQ(c->publish.nfd_file, "/etc/kubernetes/node-feature-discovery/features.d/vfready");
  EXPECT_EQ(c->publish.metrics_file, "/var/lib/node_exporter/textfile_collector/vfready.prom");
  EXPECT_EQ(c->pfs[0].guid.scheme, GuidScheme::kDerived);
  EXPECT_EQ(c->pfs[0].guid.policy, vfready::model::GuidPolicy::kFollow);
  EXPECT_TRUE(c->pfs[0].require_port_active);
  EXPECT_THAT(c->required_modules, testing::Contains("mlx5_ib"));
}

TEST(AConfig, TakesAnEthernetMtuAboveWhatIpoibTakes) {
  auto c = parse_config({{"/etc/vfready/vfready.json",
                          R"({"pfs": [{"select": {"pci": "0000:29:00.0"}, "vfs": 1,
                              "link_layer": "Ethernet", "mtu": 9000}]})"}});
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c.value().pfs.at(0).vf_mtu, 9000u);
}

TEST(AConfig, TurnsAPublishedFileOffWithFalse) {
  auto c = parse_config(
      {{"main.json", kMinimal}, {"10-publish.json", R"({"publish": {"metrics_file": false,
                                                             "nfd_file": "/tmp/labels"}})"}});
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_FALSE(c->publish.metrics_file.has_value());
  EXPECT_EQ(c->publish.nfd_file, "/tmp/labels");
  EXPECT_EQ(c->publish.status_file, "/run/vfready/status.json");
}

// Paths that cannot work: a published file on a configuration file (the main one or a
// drop-in, also spelt otherwise), two keys on one file, a NUL byte.
TEST(AConfig, RefusesPublishedFilesThatWouldOverwriteEachOtherOrTheConfiguration) {
  const auto with = [](const std::string& publish) {
    return parse_config(
        {{"/etc/vfready/vfready.json", kMinimal},
         {"/etc/vfready/vfready.json.d/10-publish.json", R"({"publish": )" + publish + "}"}});
  };
  auto on_config = with(R"({"status_file": "/etc/vfready/./vfready.json"})");
  ASSERT_FALSE(on_config);
  EXPECT_EQ(on_config.error().message,
            "/etc/vfready/vfready.json.d/10-publish.json: $.publish.status_file: "
            "\"/etc/vfready/./vfready.json\" is a configuration file: each write would "
            "overwrite it (choose another path, or false for none)");
  EXPECT_FALSE(with(R"({"metrics_file": "/etc/vfready/vfready.json.d/10-publish.json"})"));
  auto shared = with(R"({"status_file": "/run/x", "metrics_file": "/run//x"})");
  ASSERT_FALSE(shared);
  EXPECT_THAT(shared.error().message,
              HasSubstr("$.publish.metrics_file: \"/run//x\" is also status_file"));
  auto nul = with(R"({"nfd_file": "/run/a\u0000b"})");
  ASSERT_FALSE(nul);
  EXPECT_THAT(nul.error().message, HasSubstr("$.publish.nfd_file"));
  EXPECT_THAT(nul.error().message, HasSubstr("NUL"));
  EXPECT_TRUE(with(R"({"status_file": "/run/x", "metrics_file": false, "nfd_file": "/run/y"})"));
}

TEST(AConfig, MergesDropInsInOrderAndBlamesTheFileThatSetTheBadKey) {
  auto c = parse_config({{"main.json", kMinimal},
                         {"10-timeouts.json", R"({"timeouts": {"udev_ms": 5000}})"},
                         {"20-outcome.json", R"({"outcome": {"degraded": "fail"}})"}});
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->timeouts.udev_ms, 5000u);
  EXPECT_FALSE(c->ready_when_degraded);
  EXPECT_EQ(c->pfs[0].vfs, 8);

  auto bad = parse_config(
      {{"main.json", kMinimal}, {"10-timeouts.json", R"({"timeouts": {"udev_ms": 0}})"}});
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message,
              HasSubstr("10-timeouts.json: $.timeouts.udev_ms: is 0; must be from 1 to"));
}

TEST(AConfig, ReadsPoolAndExplicitGuidSchemes) {
  auto pool = parse_config({{"m.json", R"({"pfs": [{"select": {"device": "0x1021"}, "vfs": 4,
      "guid": {"scheme": "pool", "first": "0a:00:00:00:00:00:00:00",
               "last": "0a:00:00:00:00:00:ff:ff"}}]})"}});
  ASSERT_TRUE(pool) << pool.error().message;
  EXPECT_EQ(pool->pfs[0].guid.scheme, GuidScheme::kPool);
  EXPECT_EQ(pool->pfs[0].guid.pool_last.str(), "0a:00:00:00:00:00:ff:ff");
  auto explicit_ = parse_config({{"m.json", R"({"pfs": [{"select": {"pci": "0000:18:00.0"},
      "vfs": 2, "guid": {"scheme": "explicit",
      "guids": ["0a:00:00:00:00:00:00:01", "0a:00:00:00:00:00:00:02"]}}]})"}});
  ASSERT_TRUE(explicit_) << explicit_.error().message;
  EXPECT_EQ(explicit_->pfs[0].guid.guids.size(), 2u);
}

struct BadConfig {
  const char* name;
  const char* json;
  const char* message;
  friend void PrintTo(const BadConfig& b, std::ostream* os) { *os << b.name; }
};

class AConfigRejects : public testing::TestWithParam<BadConfig> {};

TEST_P(AConfigRejects, NamingTheFileTheJsonPathAndWhatIsValid) {
  auto c = parse_config({{"/etc/vfready/vfready.json", GetParam().json}});
  ASSERT_FALSE(c);
  EXPECT_THAT(c.error().message, testing::StartsWith("/etc/vfready/vfready.json: "));
  EXPECT_THAT(c.error().message, HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    BadInput, AConfigRejects,
    testing::Values(
        BadConfig{"NotJson", "{", "not valid JSON"},
        BadConfig{"PfNameUsesItself",
                  R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 1,
                      "pf_name": "x{pf_name}"}]})",
                  "$.pfs[0].pf_name: template \"x{pf_name}\" uses {pf_name}, the name it makes"},
        BadConfig{"NoPfs", "{}", "$.pfs: is required"},
        BadConfig{"UnknownTopKey", R"({"pfs": [], "pf": 1})", "$.pf: unknown key (valid here: "},
        BadConfig{"UnknownPfKey", R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 1,
                  "vf_nmae": "x{vf}"}]})",
                  "$.pfs[0].vf_nmae: unknown key"},
        BadConfig{"BadPci", R"({"pfs": [{"select": {"pci": "mlx5_0"}, "vfs": 1}]})",
                  "$.pfs[0].select.pci: invalid PCI address \"mlx5_0\""},
        BadConfig{"BadPciInList",
                  R"({"pfs": [{"select": {"pci": ["0000:18:00.0", "18:00"]}, "vfs": 1}]})",
                  "$.pfs[0].select.pci[1]: invalid PCI address"},
        BadConfig{"NoSelector", R"({"pfs": [{"select": {}, "vfs": 1}]})",
                  "$.pfs[0].select: must have \"pci\""},
        BadConfig{"BothSelectors",
                  R"({"pfs": [{"select": {"pci": "0000:18:00.0", "device": "0x1021"}, "vfs": 1}]})",
                  "not both"},
        BadConfig{"BadDevice", R"({"pfs": [{"select": {"device": "1021"}, "vfs": 1}]})",
                  "$.pfs[0].select.device: is \"1021\"; must be a PCI device ID like \"0x1021\""},
        BadConfig{"TwiceSelected", R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 1},
                  {"select": {"pci": "0000:18:00.0"}, "vfs": 2}]})",
                  "$.pfs[1].select.pci: PF 0000:18:00.0 is selected twice"},
        BadConfig{"NegativeVfs", R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": -1}]})",
                  "$.pfs[0].vfs: must be an integer from 0 to 4096"},
        BadConfig{"BadLinkLayer",
                  R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 1, "link_layer": "IB"}]})",
                  "$.pfs[0].link_layer: is \"IB\"; must be one of InfiniBand, Ethernet"},
        BadConfig{
            "UnknownTemplateField",
            R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 1, "vf_name": "ib{vff}"}]})",
            "$.pfs[0].vf_name: template \"ib{vff}\": unknown field {vff}"},
        BadConfig{
            "VfFieldInPfName",
            R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 1, "pf_name": "ib{vf}"}]})",
            "$.pfs[0].pf_name: template \"ib{vf}\" uses {vf}"},
        BadConfig{"SameNameForEveryVf",
                  R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 2, "vf_name": "ibvf"}]})",
                  "would give every VF the same name"},
        BadConfig{"MtuTooSmall",
                  R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 1, "mtu": 10}]})",
                  "$.pfs[0].mtu: is 10; must be from 68 to 65520"},
        BadConfig{"IpoibMtuAboveTheKernelsLimit",
                  R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 1, "mtu": 4096}]})",
                  "$.pfs[0].mtu: is 4096; an IPoIB netdev (link_layer InfiniBand) takes 72 to "
                  "4092: the kernel's ipoib_change_mtu() refuses more than 4092"},
        BadConfig{"IpoibPfMtuAboveTheKernelsLimit",
                  R"({"pfs": [{"select": {"device": "0x1021", "link_layer": "InfiniBand"},
                      "vfs": 1, "pf_mtu": 9000}]})",
                  "$.pfs[0].pf_mtu: is 9000; an IPoIB netdev"},
        BadConfig{"ZeroGuid", R"({"pfs": [{"select": {"device": "0x1021"}, "vfs": 1, "guid":
                  {"scheme": "pool", "first": "00:00:00:00:00:00:00:00",
                   "last": "00:00:00:00:00:00:00:09"}}]})",
                  "$.pfs[0].guid.first: GUID 00:00:00:00:00:00:00:00 cannot be assigned"},
        BadConfig{"PoolBackwards", R"({"pfs": [{"select": {"device": "0x1021"}, "vfs": 1, "guid":
                  {"scheme": "pool", "first": "0a:00:00:00:00:00:00:09",
                   "last": "0a:00:00:00:00:00:00:01"}}]})",
                  "$.pfs[0].guid.last: is below \"first\""},
        BadConfig{"ExplicitCountWrong", R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 2,
                  "guid": {"scheme": "explicit", "guids": ["0a:00:00:00:00:00:00:01"]}}]})",
                  "$.pfs[0].guid.guids: has 1 GUIDs for 2 VFs"},
        BadConfig{"ExplicitByDevice", R"({"pfs": [{"select": {"device": "0x1021"}, "vfs": 1,
                  "guid": {"scheme": "explicit", "guids": ["0a:00:00:00:00:00:00:01"]}}]})",
                  "explicit GUIDs need exactly one PF"},
        BadConfig{"DerivedTooManyVfs",
                  R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 300}]})",
                  "$.pfs[0].vfs: is more than the derived GUID scheme's 256 VFs"},
        BadConfig{"BadFirmwareVersion", R"({"pfs": [], "firmware_minimums": {"0x1021": "new"}})",
                  "$.firmware_minimums.0x1021: invalid version \"new\""},
        BadConfig{"BadOutcome", R"({"pfs": [], "outcome": {"degraded": "maybe"}})",
                  "$.outcome.degraded: is \"maybe\"; must be one of ready, fail"},
        BadConfig{"RelativePublishPath", R"({"pfs": [], "publish": {"nfd_file": "vfready"}})",
                  "$.publish.nfd_file: must be an absolute file path, or false for none"},
        BadConfig{"UnknownPublishKey", R"({"pfs": [], "publish": {"status": "/run/x"}})",
                  "$.publish.status: unknown key"}),
    [](const testing::TestParamInfo<BadConfig>& info) { return info.param.name; });
