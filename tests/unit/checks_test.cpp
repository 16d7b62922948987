// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/checks.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <sstream>

#include "host_builder.hpp"

using testing::Contains;
using testing::ElementsAre;
using testing::HasSubstr;
using namespace vfready::model;
using vfready::testing::dgx_host;

namespace {

CompatTable shipped_table() {
  const std::string path = VFREADY_CONFIG_DIR "/compatibility.json";
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  auto t = parse_compat_table({{path, s.str()}});
  EXPECT_TRUE(t) << t.error().message;
  return t.value();
}

Config minimal_config() {
  return parse_config({{"c.json", R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 8}]})"}})
      .value();
}

PfTarget target_of(const Config& c, const HostInfo& h) { return make_plan(c, h).value().pfs.at(0); }

}  // namespace

TEST(TheKernelLogScan, FindsUnknownSymbolsAndProbeFailuresOfRdmaModules) {
  auto found = scan_kernel_log({
      "3,10,100,-;mlx5_core: Unknown symbol strlcpy (err -2)",
      "mlx5_ib: Unknown symbol ib_register_device (err -22)",
      "mlx5_core: probe of 0000:18:00.2 failed with error -5",
      "mlx5_core 0000:40:00.0: probe with driver mlx5_core failed with error -110",
      "nvidia: Unknown symbol foo (err -2)",
      "mlx5_core 0000:18:00.0: firmware version: 28.43.1014",
  });
  ASSERT_EQ(found.size(), 4u);
  EXPECT_EQ(found[0].module, "mlx5_core");
  EXPECT_EQ(found[0].symbol, "strlcpy");
  EXPECT_EQ(found[0].error, -2);
  EXPECT_EQ(found[1].symbol, "ib_register_device");
  EXPECT_EQ(found[2].kind, KernelLogProblem::Kind::kProbeFailed);
  EXPECT_EQ(found[2].pci->str(), "0000:18:00.2");
  EXPECT_EQ(found[3].pci->str(), "0000:40:00.0");
  EXPECT_EQ(found[3].error, -110);
}

TEST(TheKernelLogScan, AttributesLinesThatNameAFunctionAndNeverThrows) {
  auto found = scan_kernel_log({
      "mlx5_core 0000:40:00.0: probe_one:1762:(pid 5): mlx5_init_one failed with error code -110",
      "mlx5_core 0000:18:00.0: poll_health:800:(pid 0): device's health compromised",
      "mlx5_core: disagrees about version of symbol module_layout",
      "mlx5_core: probe of 0000:19:00.0 failed with error -99999999999999999999999",
      "mlx5_core 0000:18:00.0: firmware version: 28.43.1014",
      "mlx5_core " + std::string(5000, 'x') + ": probe failed with error -5",
  });
  ASSERT_EQ(found.size(), 4u);
  EXPECT_EQ(found[0].kind, KernelLogProblem::Kind::kProbeFailed);
  EXPECT_EQ(found[0].pci->str(), "0000:40:00.0");
  EXPECT_EQ(found[0].error, -110);
  EXPECT_EQ(found[1].kind, KernelLogProblem::Kind::kDeviceError);
  EXPECT_EQ(found[1].pci->str(), "0000:18:00.0");
  EXPECT_EQ(found[2].kind, KernelLogProblem::Kind::kUnknownSymbol);
  EXPECT_EQ(found[2].symbol, "module_layout");
  EXPECT_EQ(found[3].pci->str(), "0000:19:00.0");
  EXPECT_EQ(found[3].error, std::numeric_limits<int>::min());  // clamped, not thrown
}

TEST(TheHardwareCheck, FailsAPfWhoseProbeTheKernelLogSaysFailedAndWarnsOfItsErrors) {
  auto host = dgx_host();
  host.kernel_log = {
      "mlx5_core 0000:18:00.0: probe_one:1762:(pid 5): mlx5_init_one failed with error code -5",
      "mlx5_core 0000:19:00.0: mlx5_cmd_out_err:838:(pid 1): QUERY_VPORT failed, status bad",
  };
  const auto config = minimal_config();
  const auto target = target_of(config, host);
  auto v = check_hardware(target, &host.functions.front(), config, shipped_table(), host);
  EXPECT_THAT(texts(v.failures), Contains(HasSubstr("mlx5_init_one failed with error code -5")));
  host.kernel_log = {
      "mlx5_core 0000:18:00.0: poll_health:800:(pid 0): device's health compromised"};
  v = check_hardware(target, &host.functions.front(), config, shipped_table(), host);
  EXPECT_TRUE(v.ok());
  EXPECT_THAT(texts(v.warnings), Contains(HasSubstr("health compromised")));
}

TEST(TheHardwareCheck, WritesNothingToAPfWhoseDriverMadeNoNetdevOrRdmaDevice) {
  auto host = dgx_host();
  host.functions[0].netdev.reset();
  host.functions[0].ib_device.reset();
  const auto config = minimal_config();
  auto v = check_hardware(target_of(config, host), &host.functions.front(), config, shipped_table(),
                          host);
  ASSERT_EQ(v.failures.size(), 1u);
  EXPECT_EQ(v.failures[0].code(), "pf-unhealthy");
  EXPECT_THAT(v.failures[0].text, HasSubstr("neither a netdev nor an RDMA device"));
}

TEST(TheHardwareCheck, RefusesAFirmwareVersionItCannotRead) {
  auto host = dgx_host();
  host.functions[0].firmware.reset();
  host.functions[0].firmware_text = "unknown";
  const auto config = minimal_config();
  auto v = check_hardware(target_of(config, host), &host.functions.front(), config, shipped_table(),
                          host);
  ASSERT_EQ(v.failures.size(), 1u);
  EXPECT_EQ(v.failures[0].code(), "firmware-unreadable");
  EXPECT_THAT(v.failures[0].text, HasSubstr("reads \"unknown\", not major.minor.patch"));
}

TEST(TheDriverCheck, PassesOnTheReferenceHost) {
  auto v = check_driver(minimal_config(), shipped_table(), dgx_host());
  EXPECT_TRUE(v.ok()) << testing::PrintToString(texts(v.failures));
  EXPECT_TRUE(v.warnings.empty());
}

TEST(TheDriverCheck, FailsOnAMissingModuleSayingHowToLoadIt) {
  auto host = dgx_host();
  host.modules.erase("mlx5_ib");
  auto v = check_driver(minimal_config(), shipped_table(), host);
  EXPECT_THAT(texts(v.failures),
              ElementsAre(HasSubstr("module mlx5_ib is not loaded: load it (modprobe")));
  EXPECT_EQ(v.failures.at(0).code(), "module-missing");
  EXPECT_THAT(v.failures.at(0).remedy, HasSubstr("modprobe"));
}

// The configuration a fresh install ships selects no PF: on a machine without the
// driver it still passes, so that the unit reaches READY at once.
TEST(TheDriverCheck, PassesAConfigurationWithNoPfWithoutTheDriver) {
  auto host = dgx_host();
  host.modules.clear();
  auto config = minimal_config();
  EXPECT_FALSE(check_driver(config, shipped_table(), host).ok());
  config.pfs.clear();
  EXPECT_TRUE(check_driver(config, shipped_table(), host).ok());
}

TEST(TheDriverCheck, FailsOnAnUnknownSymbolNamingItAndTheKernel) {
  auto host = dgx_host();
  host.kernel_log = {"mlx5_core: Unknown symbol strlcpy (err -2)"};
  auto v = check_driver(minimal_config(), shipped_table(), host);
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(texts(v.failures),
              Contains(HasSubstr("module mlx5_core does not fit the running kernel "
                                 "6.8.0-55-generic")));
  EXPECT_THAT(texts(v.failures), Contains(HasSubstr("strlcpy")));
}

TEST(TheDriverCheck, TrustsACleanKernelLogOverTheTable) {
  auto host = dgx_host();
  host.modules["mlx5_core"] = "24.04-0.6.6";
  auto clean = check_driver(minimal_config(), shipped_table(), host);
  EXPECT_TRUE(clean.ok());
  EXPECT_THAT(texts(clean.warnings), ElementsAre(HasSubstr("listed as incompatible with kernel")));
  host.kernel_log = {"mlx5_core: Unknown symbol strlcpy (err -2)"};
  auto broken = check_driver(minimal_config(), shipped_table(), host);
  EXPECT_THAT(texts(broken.failures), Contains(HasSubstr("24.07 or later")));
}

TEST(TheDriverCheck, LetsUsersOverrideTheShippedTable) {
  auto host = dgx_host();
  host.modules["mlx5_core"] = "24.04-0.6.6";
  host.kernel_log = {"mlx5_core: Unknown symbol strlcpy (err -2)"};
  auto table = parse_compat_table(
      {{"shipped.json", R"({"drivers": [{"module": "mlx5_core", "verdict": "incompatible",
         "source": "shipped"}]})"},
       {"/etc/vfready/compatibility.json", R"({"drivers": [{"module": "mlx5_core",
         "versions": {"from": "24.04"}, "verdict": "compatible", "source": "our lab"}]})"}});
  ASSERT_TRUE(table) << table.error().message;
  EXPECT_TRUE(
      table->find("mlx5_core", Version::parse("24.04-0.6.6").value(), Version::parse("6.8").value())
          ->compatible);
}

TEST(ACompatTable, RejectsBadEntriesNamingTheFileAndPath) {
  auto t = parse_compat_table({{"mine.json", R"({"drivers": [{"module": "mlx5_core",
      "verdict": "fine", "source": "x"}]})"}});
  ASSERT_FALSE(t);
  EXPECT_THAT(t.error().message,
              HasSubstr("mine.json: $.drivers[0].verdict: is \"fine\"; must be one of compatible"));
}

TEST(TheHardwareCheck, PassesAHealthyPf) {
  const auto c = minimal_config();
  const auto h = dgx_host();
  auto v = check_hardware(target_of(c, h), &h.functions[0], c, shipped_table(), h);
  EXPECT_TRUE(v.ok()) << testing::PrintToString(texts(v.failures));
}

TEST(TheHardwareCheck, ReportsEthernetFallbackWithTheMlxconfigRemedy) {
  const auto c = minimal_config();
  auto h = dgx_host();
  h.functions[0].ports[0].link_layer = "Ethernet";
  auto v = check_hardware(target_of(c, h), &h.functions[0], c, shipped_table(), h);
  EXPECT_THAT(texts(v.failures),
              ElementsAre(HasSubstr("port 1 of PF 0000:18:00.0 is Ethernet, configured "
                                    "InfiniBand: set it with mlxconfig -d 0000:18:00.0 set "
                                    "LINK_TYPE_P1=1")));
  EXPECT_EQ(v.failures.at(0).kind, EventKind::kEthernetFallback);
  EXPECT_EQ(v.failures.at(0).pf, "0000:18:00.0");
  h.functions[0].ports[0].link_layer = "Unknown";
  v = check_hardware(target_of(c, h), &h.functions[0], c, shipped_table(), h);
  EXPECT_EQ(v.failures.at(0).kind, EventKind::kLinkLayerMismatch);
}

TEST(TheHardwareCheck, FailsAPfWhosePortStateCouldNotBeReadSayingWhy) {
  const auto c = minimal_config();
  auto h = dgx_host();
  h.functions[0].ports[0].state = "";
  h.functions[0].ports[0].state_error = "Input/output error (EIO)";
  const auto v = check_hardware(target_of(c, h), &h.functions[0], c, shipped_table(), h);
  EXPECT_THAT(texts(v.failures),
              ElementsAre(HasSubstr("reading port 1 of PF 0000:18:00.0 (mlx5_x) failed: "
                                    "Input/output error (EIO): the driver cannot query")));
  EXPECT_EQ(v.failures.at(0).kind, EventKind::kHostReadFailed);
}

TEST(TheHardwareCheck, OnlyWarnsOfAPortStateNotReadWhereThePortIsNotWaitedFor) {
  const auto c = minimal_config();
  auto h = dgx_host();
  h.functions[0].ports[0].state_error = "Input/output error (EIO)";
  auto target = target_of(c, h);
  target.require_port_active = false;
  auto v = check_hardware(target, &h.functions[0], c, shipped_table(), h);
  EXPECT_TRUE(v.ok()) << testing::PrintToString(texts(v.failures));
  EXPECT_THAT(texts(v.warnings), ElementsAre(HasSubstr("reading port 1 of PF 0000:18:00.0")));
  // A second port: the pass waits for port 1 only.
  h.functions[0].ports[0].state_error.clear();
  h.functions[0].ports.push_back(h.functions[0].ports[0]);
  h.functions[0].ports[1].state_error = "Input/output error (EIO)";
  v = check_hardware(target_of(c, h), &h.functions[0], c, shipped_table(), h);
  EXPECT_TRUE(v.ok()) << testing::PrintToString(texts(v.failures));
  EXPECT_THAT(texts(v.warnings), ElementsAre(HasSubstr("reading port 2 of PF 0000:18:00.0")));
}

TEST(TheHardwareCheck, ReportsOldFirmwareAgainstTheTableOrTheConfig) {
  auto c = minimal_config();
  auto h = dgx_host();
  h.functions[0].firmware = Version::parse("28.39.1002").value();
  auto v = check_hardware(target_of(c, h), &h.functions[0], c, shipped_table(), h);
  EXPECT_THAT(texts(v.failures),
              ElementsAre(HasSubstr("firmware 28.39.1002 of PF 0000:18:00.0 "
                                    "(ConnectX-7) is older than the required 28.43.1014")));
  c.firmware_minimums.insert_or_assign(0x1021, Version::parse("28.30").value());
  EXPECT_TRUE(check_hardware(target_of(c, h), &h.functions[0], c, shipped_table(), h).ok());
}

TEST(TheHardwareCheck, ReportsTooFewVfsNoDriverAndProbeFailures) {
  const auto c = minimal_config();
  auto h = dgx_host();
  h.functions[0].totalvfs = 4;
  EXPECT_THAT(
      texts(check_hardware(target_of(c, h), &h.functions[0], c, shipped_table(), h).failures),
      ElementsAre(HasSubstr("offers 4 VFs, 8 configured")));
  h.functions[0].driver.reset();
  h.kernel_log = {"mlx5_core 0000:18:00.0: probe with driver mlx5_core failed with error -110"};
  auto v = check_hardware(target_of(c, h), &h.functions[0], c, shipped_table(), h);
  EXPECT_THAT(texts(v.failures), ElementsAre(HasSubstr("failed to probe PF 0000:18:00.0"),
                                             HasSubstr("has no driver bound")));
  EXPECT_EQ(v.failures.at(0).kind, EventKind::kDriverProbeFailed);
  EXPECT_EQ(v.failures.at(1).kind, EventKind::kPfNoDriver);
}

TEST(LoadFailureEvidence, IsALineShowingAMissingModuleDoesNotFitOrFailedItsProbe) {
  using vfready::model::load_failure_evidence;
  const std::vector<std::string> log = {"mlx5_core 0000:18:00.0: firmware version: 28.43.1014",
                                        "mlx5_ib: Unknown symbol ib_umem_get_peer (err -2)"};
  EXPECT_EQ(load_failure_evidence({"mlx5_ib"}, {"mlx5_ib"}, log),
            "mlx5_ib: Unknown symbol ib_umem_get_peer (err -2)");
  EXPECT_FALSE(load_failure_evidence({"ib_ipoib"}, {"ib_ipoib"}, log)) << "another module's line";
  EXPECT_FALSE(load_failure_evidence({"mlx5_ib"}, {"mlx5_ib"}, {"mlx5_ib: loaded"}));
  EXPECT_TRUE(
      load_failure_evidence({"mlx5_core"}, {"mlx5_core"},
                            {"mlx5_core: disagrees about version of symbol module_layout"}));
  // A required module that does not fit the kernel: the ones that need it never load.
  const std::vector<std::string> misfit = {
      "mlx5_core: Unknown symbol strlcpy (err -2)",
      "mlx5_core: probe of 0000:aa:00.0 failed with error -22"};
  EXPECT_EQ(load_failure_evidence({"mlx5_core", "mlx5_ib"}, {"mlx5_ib"}, misfit),
            "mlx5_core: Unknown symbol strlcpy (err -2)");
  EXPECT_FALSE(load_failure_evidence({"mlx5_ib"}, {"mlx5_ib"}, {misfit[1]}))
      << "a probe that failed on one function keeps no module from loading";
}

// Every kernel log line that names a configured PF or one of its VFs reaches the status:
// the PF's own as its problems or warnings, its VFs' as its warnings, and all of them
// as the node's when the driver check stops the pass before any PF is judged.
TEST(TheKernelLogOfAPf, NamesItsVfsLinesToo) {
  auto host = dgx_host();
  host.kernel_log = {
      "mlx5_core 0000:18:00.3: mlx5_cmd_out_err: CREATE_QP(0x500) op_mod(0x0) "
      "failed, status bad parameter(0x3)",
      "mlx5_core 0000:40:00.3: mlx5_cmd_out_err: CREATE_QP failed",
      "mlx5_core 0000:18:00.0: poll_health: device's health compromised"};
  const auto config = minimal_config();
  const auto target = target_of(config, host);
  const auto lines = log_lines_of_pf(target, host);
  ASSERT_EQ(lines.size(), 2u) << "another PF's VF is not its";
  EXPECT_THAT(lines[0].text, HasSubstr("the kernel log names VF 0000:18:00.3 of PF 0000:18:00.0"));
  EXPECT_EQ(lines[0].vf, "0000:18:00.3");
  EXPECT_THAT(lines[1].text, HasSubstr("names PF 0000:18:00.0: \"mlx5_core 0000:18:00.0: "));
  const auto v = check_hardware(target, &host.functions.front(), config, shipped_table(), host);
  EXPECT_THAT(texts(v.warnings), Contains(HasSubstr("names VF 0000:18:00.3 of PF 0000:18:00.0")));
}
