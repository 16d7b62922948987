// SPDX-License-Identifier: Apache-2.0
// vfreadyd --check-config as the gate before a change: what the host already shows a pass
// would fail on, each PF and VF now -> planned, the files read, --json; and
// --generate-config, whose output the gate takes on the reference host.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "daemon_run.hpp"
#include "root_only.hpp"

using namespace vfready::testing;
using testing::ContainsRegex;
using testing::HasSubstr;

TEST(VfreadydCheckConfig, CallsAPortThatIsNotActiveAProblem) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference();
  t.function("0000:4f:00.0")["infiniband"]["ports"][0]["state"] = "1: DOWN";
  FakeHost host(t);
  const auto r = sh(vfreadyd_command(host, repo_config(), "--check-config"));
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("  problem: port 1 of PF 0000:4f:00.0 is \"1: DOWN\", not ACTIVE: "
                               "a pass would wait up to timeouts.port_active_ms (60000 ms)"));
  EXPECT_THAT(r.out,
              HasSubstr("\"require_port_active\": false in " + repo_config() + " at $.pfs[0])"));
  EXPECT_THAT(r.err, HasSubstr("does not fit this host"));
  EXPECT_TRUE(host.writes().empty());
}

TEST(VfreadydCheckConfig, ShowsEachPfAndVfNowAndPlannedTheFilesReadAndAsJson) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  // Another tool made PF 0000:18:00.0's VFs: kernel names, GUIDs zero.
  ASSERT_EQ(sh("echo 8 > " + host.pci("0000:18:00.0", "sriov_numvfs")).exit_code, 0);
  for (int vf = 0; vf < 8; ++vf) {  // the names udev gives them
    ASSERT_TRUE(host.has_link("ibp24s0v" + std::to_string(vf), 30s)) << "VF " << vf;
  }
  const auto config = write_config(host, read_file(repo_config()));
  const auto dropin =
      write_config(host, R"({"outcome": {"degraded": "fail"}})", "vfready.d/50-site.json");
  const auto writes = host.writes().size();
  const auto text = sh(vfreadyd_command(host, config, "--check-config"));
  ASSERT_EQ(text.exit_code, 0) << text.out << text.err;
  EXPECT_THAT(text.out, HasSubstr("config: " + config + "," + dropin + "\n"));
  EXPECT_THAT(text.out, HasSubstr("compatibility tables: " VFREADY_SOURCE_DIR
                                  "/config/compatibility.json\n"));
  EXPECT_THAT(text.out, HasSubstr("PF 0000:18:00.0 ibp24s0 -> ibs0: 8 -> 8 VFs (no sriov_numvfs "
                                  "write), port 4: ACTIVE\n"));
  EXPECT_THAT(text.out, HasSubstr("VF 0   0000:18:00.1  name ibp24s0v0 -> ibs0v0  GUID "
                                  "00:00:00:00:00:00:00:00 -> 06:ea:03:00:30:10:00:00  "));
  EXPECT_THAT(text.out, HasSubstr("VF 0   0000:40:00.1  name - -> ibs1v0  GUID - -> "));

  const auto json = sh(vfreadyd_command(host, config, "--check-config --json"));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto plan = nlohmann::json::parse(json.out);
  EXPECT_TRUE(plan["ok"]);
  EXPECT_EQ(plan["config_files"], nlohmann::json({config, dropin}));
  ASSERT_EQ(plan["pfs"].size(), 8U);
  const auto& first = plan["pfs"][0];
  EXPECT_EQ(first["pci"], "0000:18:00.0");
  EXPECT_EQ(first["name_now"], "ibp24s0");
  EXPECT_EQ(first["name"], "ibs0");
  EXPECT_EQ(first["vfs_now"], 8);
  EXPECT_EQ(first["port_state"], "4: ACTIVE");
  EXPECT_EQ(first["vf"][3]["guid_now"], "00:00:00:00:00:00:00:00");
  EXPECT_EQ(first["vf"][3]["name"], "ibs0v3");
  EXPECT_TRUE(plan["pfs"][1]["vf"][0]["name_now"].is_null());
  EXPECT_EQ(host.writes().size(), writes);

  // After a bring-up: every name and GUID as is.
  ASSERT_EQ(sh(vfreadyd_command(host, config, "--once"), 60s).exit_code, 0);
  const auto after = sh(vfreadyd_command(host, config, "--check-config"));
  EXPECT_THAT(after.out, HasSubstr("VF 0   0000:18:00.1  name ibs0v0 (as is)  GUID "
                                   "06:ea:03:00:30:10:00:00 (as is)  "));
}

TEST(VfreadydCheckConfig, AnswersInJsonWhenThePlanIsRefused) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference());
  const auto config = write_config(host, R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 2},
                                                   {"select": {"device": "0x1021"}, "vfs": 2}]})");
  const auto r = sh(vfreadyd_command(host, config, "--check-config --json"));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  const auto plan = nlohmann::json::parse(r.out);
  EXPECT_FALSE(plan["ok"]);
  EXPECT_EQ(plan["config_files"], nlohmann::json({config}));
  EXPECT_THAT(plan["error"].get<std::string>(), HasSubstr("is selected here and by"));
  EXPECT_THAT(r.err, HasSubstr("is selected here and by"));
}

// A status file on the configuration file itself would overwrite it at the first pass:
// the gate refuses it, names the file and key, and vfreadyd changes nothing (the
// configuration is as it was, no write reaches the host).
TEST(VfreadydCheckConfig, RefusesAStatusFileThatIsTheConfigurationFile) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference());
  const auto config = host.root() + "/etc-vfready.json";
  const auto text = R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 2}],
                        "publish": {"status_file": ")" +
                    config + R"("}})";
  std::ofstream(config) << text;
  const auto writes = host.writes().size();
  for (const char* mode : {"--check-config", "--once"}) {
    const auto r = sh(vfreadyd_command(host, config, mode));
    EXPECT_NE(r.exit_code, 0) << mode;
    EXPECT_THAT(r.err, HasSubstr(config + ": $.publish.status_file: \"" + config +
                                 "\" is a configuration file"))
        << mode << ": " << r.err;
  }
  EXPECT_EQ(read_file(config), text);
  EXPECT_EQ(host.writes().size(), writes);
}

// Of a function no entry can select, only the names it and its VFs hold are read (its
// VFs by their virtfn links): a VF another tool made on a storage NIC keeps its name.
TEST(VfreadydCheckConfig, RefusesANameHeldByAVfOfAPfItDoesNotManage) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  ASSERT_EQ(sh("echo 2 > " + host.pci("0000:29:00.0", "sriov_numvfs")).exit_code, 0);
  // udev names it (by its path) as it handles its add.
  ASSERT_TRUE(wait_until(
      [&] { return std::filesystem::exists(host.pci("0000:29:00.3", "net/enp41s0v1")); }, 10s));
  const auto config = write_config(
      host,
      R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 2, "vf_name": "enp41s0v{vf}"}]})");
  const auto writes = host.writes().size();
  const auto r = sh(vfreadyd_command(host, config, "--check-config"));
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("is also the name of the netdev of VF 0000:29:00.2 of "
                               "0000:29:00.0, which vfready does not manage"));
  EXPECT_EQ(host.writes().size(), writes);
}

TEST(VfreadydGenerateConfig, WritesAConfigurationTheGateTakesOnTheReferenceHost) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference());
  const auto r = sh(on_host(host) + VFREADYD_PATH " --generate-config");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto generated = nlohmann::json::parse(r.out);
  // The schema where the package installs it, beside the compatibility table.
  EXPECT_EQ(generated["$schema"], VFREADY_INSTALL_DATADIR "/vfready/vfready.schema.json");
  EXPECT_EQ(generated["pfs"][0]["select"]["pci"].size(), 8U);
  EXPECT_EQ(generated["pfs"][0]["vfs"], 8);
  EXPECT_THAT(r.err, HasSubstr("vfreadyd: selected 8 SR-IOV PFs: 0000:18:00.0, "));
  EXPECT_THAT(r.err, HasSubstr("vfreadyd: left out 0000:29:00.0: Ethernet beside InfiniBand PFs"));
  // The repository's schema takes it, and so does the gate, writing nothing.
  const auto config = write_config(host, r.out);
  const auto schema = sh(
      "python3 -c 'import json, sys, jsonschema; jsonschema.validate(json.load(open(sys.argv[1])), "
      "json.load(open(sys.argv[2])))' " +
      config + " " VFREADY_SOURCE_DIR "/config/vfready.schema.json");
  EXPECT_EQ(schema.exit_code, 0) << schema.err;
  const auto check = sh(vfreadyd_command(host, config, "--check-config"));
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_TRUE(host.writes().empty());
}

// A configuration that cannot be read: --check-config --json still answers in JSON, and
// a daemon that cannot start leaves a failed status with the reason, in place of what a
// previous run left, so that the kubelet gate (vfreadyctl wait) answers at once.
TEST(VfreadydBadConfig, IsAnsweredInJsonAndLeftAsAFailedStatusForTheGate) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference());
  const auto config = write_config(host, R"({"pfs": [}")");
  const auto json = sh(vfreadyd_command(host, config, "--check-config --json"));
  EXPECT_EQ(json.exit_code, 1);
  const auto answer = nlohmann::json::parse(json.out);
  EXPECT_FALSE(answer["ok"]);
  EXPECT_THAT(answer["error"].get<std::string>(), HasSubstr(config + ": $.pfs[0]: not valid JSON"));

  const auto status = host.root() + "/run/vfready/status.json";
  sh("mkdir -p " + host.root() +
     "/run/vfready && echo '{\"schema_version\": 2, \"state\": "
     "\"ready\", \"node_ready\": true, \"status\": \"ready: 8/8 PFs ready\", \"pfs\": []}' > " +
     status);
  const auto start = sh(vfreadyd_command(host, config, "--no-bus"), 30s);
  EXPECT_EQ(start.exit_code, 1) << start.err;
  const auto left = nlohmann::json::parse(read_file(status));
  EXPECT_EQ(left["state"], "failed");
  EXPECT_FALSE(left["node_ready"]);
  EXPECT_THAT(left["problems"][0].get<std::string>(), HasSubstr("not valid JSON"));
  const auto wait = sh(on_host(host) + VFREADYCTL_PATH
                           " --bus-address unix:path=/nonexistent "
                           "wait --timeout 30",
                       30s);
  EXPECT_EQ(wait.exit_code, 1) << wait.err;
  EXPECT_THAT(wait.err, HasSubstr("not ready: failed: failed: the configuration cannot be read"));
  EXPECT_TRUE(host.writes().empty());
}
