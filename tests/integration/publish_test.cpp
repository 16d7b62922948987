// SPDX-License-Identifier: Apache-2.0
// What vfreadyd leaves for readers other than D-Bus: the status file that outlives it,
// Node Feature Discovery labels and node_exporter metrics; vfreadyctl's wait and render.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "bus_commands.hpp"
#include "daemon_run.hpp"
#include "private_bus.hpp"
#include "root_only.hpp"
#include "service_daemon.hpp"

using namespace vfready::testing;
using testing::HasSubstr;

namespace {

constexpr const char* kFaulty = "0000:40:00.0";

std::string status_file(const FakeHost& host) { return host.root() + "/run/vfready/status.json"; }

// vfreadyctl with no vfreadyd on the bus: it must fall back to the status file.
std::string ctl_without_daemon(const PrivateBus& bus, const FakeHost& host,
                               const std::string& args) {
  return vfreadyctl(bus, "--status-file " + status_file(host) + " " + args);
}

// The reference config with PF `pci` in an entry of its own asking `vfs` VFs; names stay
// (pf_index counts all configured PFs), publish files go under the fake host's root.
std::string config_with(const FakeHost& host, const std::string& pci, int vfs) {
  auto config = nlohmann::json::parse(read_file(repo_config()));
  auto& all = config["pfs"][0]["select"]["pci"];
  auto one = config["pfs"][0];
  all.erase(std::find(all.begin(), all.end(), pci));
  one["select"]["pci"] = {pci};
  one["vfs"] = vfs;
  config["pfs"].push_back(one);
  config["outcome"] = {{"degraded", "ready"}};
  config["publish"] = {{"nfd_file", host.root() + "/nfd/vfready"},
                       {"metrics_file", host.root() + "/prom/vfready.prom"}};
  return config.dump(2);
}

// Samples of the metrics file by "name{labels}", as the Prometheus client parses it.
std::map<std::string, double> metrics(const FakeHost& host) {
  const auto r = sh(VFREADY_SOURCE_DIR "/tests/integration/parse-metrics " + host.root() +
                    "/prom/vfready.prom");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, double> out;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    const auto s = nlohmann::json::parse(line);
    std::string key = s["name"];
    if (s["labels"].contains("pf")) {
      key += "{" + s["labels"]["pf"].get<std::string>() + "}";
    }
    if (s["labels"].contains("code")) {
      key += "{" + s["labels"]["code"].get<std::string>() + "}";
    }
    if (!s["labels"].contains("state")) {
      out[key] = s["value"];
    }
  }
  return out;
}

}  // namespace

TEST(VfreadydStatusFile, OutlivesADaemonThatFailedAndVfreadyctlShowsEveryProblemFromIt) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.function(kFaulty)["faults"] = {{"numvfs_errno", "EIO"}};
  FakeHost host(t);
  const auto config = write_config(host, read_file(repo_config()));
  write_config(host, R"({"outcome": {"degraded": "fail"}})", "vfready.d/50-fail.json");
  PrivateBus bus(PrivateBus::Policy::kShipped);
  {
    ServiceDaemon daemon(host, config, "--bus-address " + bus.address());
    ASSERT_TRUE(daemon.notify().wait_for("STATUS=degraded: 7/8 PFs ready", 60s)) << daemon.log();
    ASSERT_TRUE(daemon.process().wait(30s).exit_code == 1) << daemon.log();  // the unit fails
  }
  const auto json = sh(ctl_without_daemon(bus, host, "status --json"));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_THAT(json.err, HasSubstr("vfreadyd is not running: status from " + status_file(host) +
                                  ", written "));
  const auto status = nlohmann::json::parse(json.out);
  EXPECT_EQ(status["schema_version"], 2);
  EXPECT_EQ(status["state"], "degraded");
  EXPECT_FALSE(status["node_ready"]);
  for (const auto& pf : status["pfs"]) {
    if (pf["pci"] == kFaulty) {
      EXPECT_EQ(pf["state"], "failed");
      ASSERT_EQ(pf["problem_details"].size(), 1U);
      EXPECT_EQ(pf["problem_details"][0]["code"], "numvfs-failed");
    } else {
      EXPECT_EQ(pf["state"], "ready") << pf["pci"];
    }
  }
  // The failed PF by its configured name and by the kernel's, though it never got the first.
  for (const char* key : {"ibs1", "ibp64s0", "0000:40:00.0"}) {
    const auto pf = sh(ctl_without_daemon(bus, host, std::string("describe --json ") + key));
    ASSERT_EQ(pf.exit_code, 0) << key << ": " << pf.err;
    EXPECT_EQ(nlohmann::json::parse(pf.out)["pci"], kFaulty) << key;
  }
  const auto table = sh(ctl_without_daemon(bus, host, "status"));
  EXPECT_THAT(table.out, testing::ContainsRegex(
                             "0000:40:00.0 +ibp64s0 +failed +InfiniBand +ACTIVE +0/8 +- +1\n"));
  EXPECT_THAT(table.out,
              testing::ContainsRegex("0000:18:00.0 +ibs0 +ready .* 8/8 +ibs0v0..ibs0v7 +0\n"));
  const auto wait = sh(ctl_without_daemon(bus, host, "wait --timeout 10"), 30s);
  EXPECT_EQ(wait.exit_code, 1) << wait.err;
  EXPECT_THAT(wait.err, HasSubstr("not ready: degraded"));
}

TEST(VfreadyctlWait, ReturnsWhenTheNodeIsReadyAndTimesOutWithoutADaemon) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  PrivateBus bus(PrivateBus::Policy::kShipped);
  // Nothing yet: no daemon, no file.
  const auto none = sh(ctl_without_daemon(bus, host, "wait --timeout 0.3"), 30s);
  EXPECT_EQ(none.exit_code, 5) << none.err;
  EXPECT_THAT(none.err, HasSubstr("not ready after 0.3 s"));
  // Started while vfreadyctl waits: it returns once READY=1 is in the status.
  Background waiter(ctl_without_daemon(bus, host, "wait --timeout 60"));
  ServiceDaemon daemon(host, repo_config(), "--bus-address " + bus.address());
  const auto r = waiter.wait(90s);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ready: 8/8 PFs ready\n");
  EXPECT_TRUE(daemon.notify().wait_for("READY=1", 5s));
}

TEST(VfreadydPublish, LabelsAndMetricsParseAndFollowAPfThatFailsAndIsRepaired) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  sh("mkdir -p " + host.root() + "/nfd " + host.root() + "/prom");
  const auto config = write_config(host, config_with(host, kFaulty, 8));
  PrivateBus bus(PrivateBus::Policy::kShipped);
  ServiceDaemon daemon(host, config, "--bus-address " + bus.address());
  ASSERT_TRUE(serving(daemon, bus));
  const auto labels = [&] { return read_file(host.root() + "/nfd/vfready"); };
  ASSERT_TRUE(
      wait_until([&] { return labels().find("vfready.io/vfs=64\n") != std::string::npos; }, 10s))
      << labels();
  EXPECT_THAT(labels(), HasSubstr("vfready.io/ready=true\n"));
  EXPECT_THAT(labels(), HasSubstr("vfready.io/degraded=false\n"));
  auto m = metrics(host);
  EXPECT_EQ(m["vfready_node_ready"], 1);
  EXPECT_EQ(m["vfready_pf_ready{0000:40:00.0}"], 1);
  EXPECT_EQ(m["vfready_vfs_zero_guid{0000:40:00.0}"], 0);
  EXPECT_EQ(m["vfready_port_active{0000:40:00.0}"], 1);
  EXPECT_GT(m["vfready_bringup_seconds"], 0);
  // DescribePF dates its steps as Describe does.
  const auto one = sh(vfreadyctl(bus, "describe --json ibs0"));
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_TRUE(nlohmann::json::parse(one.out)["steps"][0]["started_at"].is_string()) << one.out;

  // The PF fails: 20 VFs where it offers 16.
  write_config(host, config_with(host, kFaulty, 20));
  ASSERT_EQ(sh(vfreadyctl(bus, "reload")).exit_code, 0);
  ASSERT_TRUE(wait_until(
      [&] { return labels().find("vfready.io/degraded=true\n") != std::string::npos; }, 30s))
      << labels();
  EXPECT_THAT(labels(), HasSubstr("vfready.io/pfs-ready=7\n"));
  // The two files are written one after the other: the metrics may come a moment later.
  ASSERT_TRUE(
      wait_until([&] { return metrics(host)["vfready_pf_ready{0000:40:00.0}"] == 0; }, 30s));
  m = metrics(host);
  EXPECT_EQ(m["vfready_pf_ready{0000:18:00.0}"], 1);
  EXPECT_EQ(m["vfready_problems{too-few-vfs}"], 1);
  EXPECT_EQ(m["vfready_config_generation"], 2);

  // Repaired: the count it offers.
  write_config(host, config_with(host, kFaulty, 8));
  ASSERT_EQ(sh(vfreadyctl(bus, "reload")).exit_code, 0);
  ASSERT_TRUE(wait_until(
      [&] { return labels().find("vfready.io/degraded=false\n") != std::string::npos; }, 30s))
      << labels();
  ASSERT_TRUE(
      wait_until([&] { return metrics(host)["vfready_pf_ready{0000:40:00.0}"] == 1; }, 30s));
  m = metrics(host);
  EXPECT_EQ(m.count("vfready_problems{too-few-vfs}"), 0U);

  // A drift repaired is counted.
  ASSERT_EQ(sh("ip -n " + host.netns() + " link set ibs2v3 name handmade").exit_code, 0);
  ASSERT_TRUE(wait_until([&] { return metrics(host)["vfready_drift_repairs_total"] >= 1; }, 30s));
}

TEST(VfreadyctlRender, DerivesTheDevicePluginConfigsFromWhatVfreadyBroughtUp) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  PrivateBus bus(PrivateBus::Policy::kShipped);
  ServiceDaemon daemon(host, repo_config(), "--bus-address " + bus.address());
  ASSERT_TRUE(serving(daemon, bus));
  const std::vector<std::string> names = {"ibs0", "ibs1", "ibs2", "ibs3",
                                          "ibs4", "ibs5", "ibs6", "ibs7"};
  const auto dp = sh(vfreadyctl(bus, "render sriov-device-plugin --resource-name rails"));
  ASSERT_EQ(dp.exit_code, 0) << dp.err;
  const auto config = nlohmann::json::parse(dp.out);
  const auto& resource = config["resourceList"][0];
  EXPECT_EQ(resource["resourceName"], "rails");
  EXPECT_EQ(resource["resourcePrefix"], "nvidia.com");
  const auto& selector = resource["selectors"][0];
  EXPECT_EQ(selector["devices"], nlohmann::json({"101e"}));  // read from sriov_vf_device
  EXPECT_EQ(selector["vendors"], nlohmann::json({"15b3"}));
  EXPECT_EQ(selector["pfNames"], nlohmann::json(names));
  EXPECT_EQ(selector["isRdma"], true);

  const auto rdma = sh(vfreadyctl(bus, "render rdma-shared-device-plugin"));
  ASSERT_EQ(rdma.exit_code, 0) << rdma.err;
  const auto shared = nlohmann::json::parse(rdma.out)["configList"][0];
  EXPECT_EQ(shared["selectors"]["deviceIDs"], nlohmann::json({"1021"}));
  EXPECT_EQ(shared["selectors"]["ifNames"], nlohmann::json(names));

  const auto policy = sh(vfreadyctl(bus, "render sriov-network-node-policy"));
  ASSERT_EQ(policy.exit_code, 0) << policy.err;
  EXPECT_THAT(policy.out, HasSubstr("kind: SriovNetworkNodePolicy\n"));
  EXPECT_THAT(policy.out, HasSubstr("  externallyManaged: true\n"));
  EXPECT_THAT(policy.out, HasSubstr("    deviceID: \"1021\"\n"));
  EXPECT_THAT(policy.out, HasSubstr("  numVfs: 8\n"));
  EXPECT_THAT(policy.out, HasSubstr("\"ibs0\", \"ibs1\""));

  const auto bad = sh(vfreadyctl(bus, "render kubelet"));
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}

TEST(VfreadydPublish, AFileThatCannotBeWrittenIsLoggedOnceAndNothingElseSuffers) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  // The metrics file's "directory" is a regular file: every write fails with ENOTDIR.
  sh("mkdir -p " + host.root() + "/nfd && touch " + host.root() + "/prom");
  const auto config = write_config(host, config_with(host, kFaulty, 8));
  PrivateBus bus(PrivateBus::Policy::kShipped);
  ServiceDaemon daemon(host, config, "--bus-address " + bus.address());
  ASSERT_TRUE(serving(daemon, bus));
  const auto labels = [&] { return read_file(host.root() + "/nfd/vfready"); };
  ASSERT_TRUE(
      wait_until([&] { return labels().find("vfready.io/vfs=64\n") != std::string::npos; }, 10s))
      << labels();
  const auto log = daemon.log();
  const std::string warning = "cannot write the metrics file " + host.root() +
                              "/prom/vfready.prom: Not a directory (ENOTDIR)";
  EXPECT_THAT(log, HasSubstr(warning));
  EXPECT_EQ(log.find(warning), log.rfind(warning)) << "logged more than once:\n" << log;
  EXPECT_EQ(sh(vfreadyctl(bus, "status")).exit_code, 0);
  EXPECT_EQ(daemon.stop(), 0);
}

TEST(VfreadydStatusFile, ALeftoverReadyFileIsReplacedAsSoonAsADaemonStarts) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.json()["modules"]["ib_ipoib"] = {{"loads_on_signal", true}};  // holds the pass back
  FakeHost host(t);
  sh("mkdir -p " + host.root() + "/run/vfready");
  std::ofstream(status_file(host)) << R"({"schema_version": 2, "state": "ready", "node_ready": true,
                                          "status": "ready: 8/8 PFs ready", "pfs": []})";
  PrivateBus bus(PrivateBus::Policy::kShipped);
  ServiceDaemon daemon(host, repo_config(), "--no-bus");
  ASSERT_TRUE(daemon.notify().wait_for("STATUS=Waiting up to 30000 ms for modules", 20s))
      << daemon.log();
  // A restarted vfreadyd is not ready yet, whatever its predecessor left.
  const auto status = nlohmann::json::parse(read_file(status_file(host)));
  EXPECT_FALSE(status["node_ready"]) << status.dump();
  const auto wait = sh(ctl_without_daemon(bus, host, "wait --timeout 0.5"), 30s);
  EXPECT_EQ(wait.exit_code, 5) << wait.out << wait.err;
  ASSERT_EQ(::kill(host.pid(), SIGUSR1), 0);
  EXPECT_TRUE(daemon.notify().wait_for("READY=1", 30s)) << daemon.log();
}

TEST(VfreadydStatus, AFailedPfStillShowsTheVfsItHasWithTheirState) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  ASSERT_EQ(sh(vfreadyd_command(host, repo_config(), "--once"), 60s).exit_code, 0);
  // Then PF 0000:40:00.0 is asked for more VFs than it offers: it fails its hardware check.
  const auto r =
      sh(vfreadyd_command(host, write_config(host, config_with(host, kFaulty, 20)), "--once"), 60s);
  EXPECT_THAT(r.err, HasSubstr("offers 16 VFs, 20 configured"));
  EXPECT_THAT(r.out,
              testing::ContainsRegex("0000:40:00.0 +ibs1 +failed .* 0/20 +ibs1v0..ibs1v7 +1\n"));
  EXPECT_THAT(r.out, testing::ContainsRegex("VF 3 +0000:40:00.4 ibs1v3 +[0-9a-f:]{23} unchecked"));
}

TEST(VfreadydStatus, SaysWhatItChangedOnAHostAnotherToolSetUpAndThatTheNextRunChangesNothing) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  // Another tool: VFs made by hand (bound, GUID 0, kernel names), and on one PF with
  // autoprobe left off (unbound).
  ASSERT_EQ(sh("echo 0 > " + host.pci("0000:18:00.0", "sriov_drivers_autoprobe")).exit_code, 0);
  for (const auto& pf : kReferenceIbPfs) {
    ASSERT_EQ(sh("echo 8 > " + host.pci(pf, "sriov_numvfs")).exit_code, 0) << pf;
  }
  const auto first = sh(vfreadyd_command(host, repo_config(), "--once"), 60s);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_THAT(first.out, HasSubstr("\nChanged: 64 GUIDs set, 56 VFs with a wrong GUID re-probed, "
                                   "72 links renamed, autoprobe turned back on\n"));
  EXPECT_THAT(first.err, HasSubstr("changed: 64 GUIDs set, 56 VFs with a wrong GUID re-probed"));
  const auto second = sh(vfreadyd_command(host, repo_config(), "--once"), 60s);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_THAT(second.out, HasSubstr("\nChanged: nothing needed changing\n"));
  EXPECT_THAT(second.err, HasSubstr("nothing needed changing"));
}

// Publish directories may be writable by others (node_exporter's textfile directory
// often is). Nothing planted there is followed or waited on: a FIFO at the name a
// temporary file once had (".<file>.<pid>") froze the daemon, SIGTERM and D-Bus included.
// A directory anyone may write without the sticky bit is refused, with a warning.
TEST(VfreadydPublish, NothingPlantedInAPublishDirectoryIsFollowedOrWaitedOn) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  sh("mkdir -p " + host.root() + "/nfd " + host.root() + "/prom && chmod 0777 " + host.root() +
     "/prom");
  const auto config = write_config(host, config_with(host, kFaulty, 8));
  PrivateBus bus(PrivateBus::Policy::kShipped);
  ServiceDaemon daemon(host, config, "--bus-address " + bus.address());
  ASSERT_TRUE(serving(daemon, bus));
  const auto labels = host.root() + "/nfd/vfready";
  ASSERT_TRUE(wait_until([&] { return exists(labels); }, 10s));
  const auto pid = std::to_string(daemon.process().pid());
  ASSERT_EQ(sh("mkfifo " + host.root() + "/nfd/.vfready." + pid + " && ln -s /etc/passwd " +
               host.root() + "/nfd/.vfready.tmp")
                .exit_code,
            0);
  ASSERT_EQ(sh("rm " + labels).exit_code, 0);
  // A pass publishes again: the labels come back, and the daemon still answers.
  const auto reconcile = sh(vfreadyctl(bus, "reconcile"), 30s);
  EXPECT_EQ(reconcile.exit_code, 0) << reconcile.err << daemon.log();
  EXPECT_TRUE(wait_until([&] { return exists(labels); }, 10s)) << daemon.log();
  EXPECT_EQ(sh(vfreadyctl(bus, "status"), 10s).exit_code, 0);
  EXPECT_FALSE(exists(host.root() + "/prom/vfready.prom"));
  EXPECT_THAT(daemon.log(),
              HasSubstr("not writing the metrics file " + host.root() +
                        "/prom/vfready.prom: its directory is writable by others and has no "
                        "sticky bit"));
  EXPECT_EQ(daemon.stop(), 0);
  // Setting the sticky bit (as /tmp has it) makes the directory fit again.
  ASSERT_EQ(sh("chmod 1777 " + host.root() + "/prom").exit_code, 0);
  ServiceDaemon again(host, config, "--bus-address " + bus.address());
  ASSERT_TRUE(serving(again, bus));
  EXPECT_TRUE(wait_until([&] { return exists(host.root() + "/prom/vfready.prom"); }, 10s))
      << again.log();
  EXPECT_EQ(again.stop(), 0);
}

// vfreadyctl reads the status file as the daemon's configuration is read: nesting
// bounded, so a file nested 100,000 levels deep is refused with a clear error (it
// crashed vfreadyctl), and bytes after the document are refused too.
TEST(VfreadyctlStatusFile, RefusesAFileNestedTooDeepOrWithBytesAfterTheDocument) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference());
  PrivateBus bus(PrivateBus::Policy::kShipped);
  sh("mkdir -p " + host.root() + "/run/vfready");
  std::ofstream(status_file(host)) << std::string(100000, '[') << std::string(100000, ']');
  auto r = sh(ctl_without_daemon(bus, host, "status"));
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(status_file(host) + ": $"));
  EXPECT_THAT(r.err, HasSubstr("is nested deeper than"));
  std::ofstream(status_file(host)) << std::string("{\"state\": \"ready\"}\0{", 20);
  r = sh(ctl_without_daemon(bus, host, "status"));
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("a NUL byte at offset 18"));
}
