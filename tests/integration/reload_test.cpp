// SPDX-License-Identifier: Apache-2.0
// A reload is judged like a start, and nothing a file system does to the configuration's
// files blocks the loop: hostile trials of vfreadyd's configuration reading.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>

#include "bus_commands.hpp"
#include "daemon_run.hpp"
#include "private_bus.hpp"
#include "root_only.hpp"
#include "service_daemon.hpp"

using namespace vfready::testing;
using testing::HasSubstr;
using testing::Not;

namespace {

std::string problem_codes(const PrivateBus& bus) {
  return trimmed(sh(busctl(bus, manager("get-property", "ProblemCodes"))).out);
}

// The reference config with every PF named `name`: valid JSON and keys, refused by the
// plan (names must be unique on the node): --check-config's exit 3.
std::string every_pf_named(const std::string& name) {
  auto config = nlohmann::json::parse(read_file(repo_config()));
  config["pfs"][0]["pf_name"] = name;
  return config.dump(2);
}

}  // namespace

// A configuration the gate refuses (exit 3) is refused by a reload too, and the running
// one stays; the refusal is added to the problems in force, never put in their place.
TEST(VfreadydReload, RefusesWhatTheGateRefusesAndAddsItToTheProblemsInForce) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  PrivateBus bus(PrivateBus::Policy::kShipped);
  const auto path = write_config(host, read_file(repo_config()));
  ServiceDaemon daemon(host, path, "--bus-address " + bus.address());
  ASSERT_TRUE(serving(daemon, bus));
  // The node's own problem in force: an mlx5_core that no longer fits the kernel, seen by
  // the pass a reconcile starts.
  std::ofstream(host.root() + "/dev/kmsg", std::ios::app)
      << "3,900,0,-;mlx5_core: Unknown symbol strlcpy (err -2)\n";
  ASSERT_EQ(sh(vfreadyctl(bus, "reconcile")).exit_code, 0);
  ASSERT_TRUE(wait_until(
      [&] { return problem_codes(bus).find("driver-mismatch") != std::string::npos; }, 30s))
      << problem_codes(bus) << daemon.log();
  const auto generation = sh(busctl(bus, manager("get-property", "ConfigGeneration"))).out;

  write_config(host, every_pf_named("ibs0"));
  const auto gate = sh(vfreadyd_command(host, path, "--check-config"));
  ASSERT_EQ(gate.exit_code, 3) << gate.out << gate.err;
  const auto r = sh(vfreadyctl(bus, "reload"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("names must be unique on the node"));
  EXPECT_THAT(r.err, HasSubstr("the running configuration stays"));
  EXPECT_EQ(sh(busctl(bus, manager("get-property", "ConfigGeneration"))).out, generation);
  const auto codes = problem_codes(bus);
  EXPECT_THAT(codes, HasSubstr("driver-mismatch")) << "the problem in force stays";
  EXPECT_THAT(codes, HasSubstr("reload-refused"));
  // A second refusal replaces the first; they do not pile up.
  sh(vfreadyctl(bus, "reload"));
  const auto again = problem_codes(bus);
  EXPECT_EQ(again.find("reload-refused"), again.rfind("reload-refused")) << again;
  EXPECT_THAT(again, HasSubstr("driver-mismatch"));
  // A pass (which starts with no node problems) lists it again: the refused file is
  // still there.
  const auto before = daemon.notify().count();
  ASSERT_EQ(sh(vfreadyctl(bus, "reconcile")).exit_code, 0);
  ASSERT_TRUE(daemon.notify().wait_for_text("Driver check failed", 30s, before)) << daemon.log();
  EXPECT_TRUE(wait_until(
      [&] { return problem_codes(bus).find("reload-refused") != std::string::npos; }, 10s))
      << problem_codes(bus);
  EXPECT_EQ(daemon.stop(), 0);
}

// After a reload the status lists exactly the PFs of the configuration in force.
TEST(VfreadydReload, ListsExactlyThePfsOfTheConfigurationInForce) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  PrivateBus bus(PrivateBus::Policy::kShipped);
  auto config = nlohmann::json::parse(read_file(repo_config()));
  const auto path = write_config(host, config.dump());
  ServiceDaemon daemon(host, path, "--bus-address " + bus.address());
  ASSERT_TRUE(serving(daemon, bus));
  config["pfs"][0]["select"]["pci"] = {"0000:18:00.0", "0000:dc:00.0"};
  write_config(host, config.dump());
  const auto r = sh(vfreadyctl(bus, "reload --timeout 60"), 90s);
  ASSERT_EQ(r.exit_code, 0) << r.err << daemon.log();
  const auto status = nlohmann::json::parse(sh(vfreadyctl(bus, "status --json")).out);
  std::vector<std::string> pfs;
  for (const auto& pf : status["pfs"]) {
    pfs.push_back(pf["pci"].get<std::string>());
  }
  EXPECT_EQ(pfs, (std::vector<std::string>{"0000:18:00.0", "0000:dc:00.0"}));
  EXPECT_EQ(daemon.stop(), 0);
}

// Drop-ins are *.json whose names do not begin with '.': an editor's lock or backup file
// is not configuration. A drop-in directory that cannot be read is an error with its
// path, at start and at reload, as an unreadable drop-in file is.
TEST(VfreadydConfigFiles, TakesOnlyJsonDropInsAndRefusesADirectoryItCannotRead) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  const auto path = write_config(host, read_file(repo_config()));
  const auto dir = host.root() + "/etc/vfready.d";
  ASSERT_EQ(sh("mkdir -p " + dir + " && echo '{' > " + dir + "/.10-mtu.json && echo '{' > " + dir +
               "/10-mtu.json~ && echo '{' > " + dir + "/#10-mtu.json#")
                .exit_code,
            0);
  auto r = sh(vfreadyd_command(host, path, "--check-config"));
  EXPECT_EQ(r.exit_code, 0) << r.err;

  ASSERT_EQ(sh("rm -rf " + dir + " && ln -s vfready.d " + dir).exit_code, 0);  // a loop
  r = sh(vfreadyd_command(host, path, "--check-config"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(dir + ": the drop-in directory cannot be read"));

  ASSERT_EQ(sh("rm -f " + dir).exit_code, 0);
  PrivateBus bus(PrivateBus::Policy::kShipped);
  ServiceDaemon daemon(host, path, "--bus-address " + bus.address());
  ASSERT_TRUE(serving(daemon, bus));
  ASSERT_EQ(sh("ln -s vfready.d " + dir).exit_code, 0);
  const auto reload = sh(vfreadyctl(bus, "reload"));
  EXPECT_EQ(reload.exit_code, 1);
  EXPECT_THAT(reload.err, HasSubstr(dir + ": the drop-in directory cannot be read"));
  EXPECT_EQ(state(bus), "s \"ready\"");
  EXPECT_EQ(daemon.stop(), 0);
}

// A drop-in that resolves to a file whose read blocks (here a sysfs attribute of a
// driver that hangs: sriov_numvfs while its write is stuck) stopped D-Bus and SIGTERM
// until it returned. It is refused before it is read: not a local file system.
TEST(VfreadydConfigFiles, RefusesADropInOnAFileSystemWhereAReadCanHangAndKeepsServing) {
  VFREADY_REQUIRE_ROOT();
  auto topology = TopologyBuilder::reference().probe_ms(1);
  topology.function("0000:40:00.0")["faults"] = {{"numvfs_write_hangs", true}};
  FakeHost host(topology);
  auto config = nlohmann::json::parse(read_file(repo_config()));
  config["pfs"][0]["select"]["pci"] = {"0000:18:00.0"};
  const auto path = write_config(host, config.dump());
  PrivateBus bus(PrivateBus::Policy::kShipped);
  ServiceDaemon daemon(host, path, "--bus-address " + bus.address());
  ASSERT_TRUE(serving(daemon, bus));
  // Someone's write hangs in the driver: every read of that sriov_numvfs waits for it.
  Background hung("echo 2 > " + host.pci("0000:40:00.0", "sriov_numvfs"));
  ASSERT_TRUE(wait_until(
      [&] {
        return read_file("/proc/" + std::to_string(hung.pid()) + "/syscall").starts_with("1 ");
      },
      10s));
  const auto dir = host.root() + "/etc/vfready.d";
  ASSERT_EQ(sh("mkdir -p " + dir + " && ln -s " + host.pci("0000:40:00.0", "sriov_numvfs") + " " +
               dir + "/50-hung.json")
                .exit_code,
            0);
  const auto reload = sh(vfreadyctl(bus, "reload"), 20s);
  EXPECT_EQ(reload.exit_code, 1) << reload.err;
  EXPECT_THAT(reload.err, HasSubstr(dir + "/50-hung.json: is not on a local file system"));
  EXPECT_EQ(sh(vfreadyctl(bus, "status"), 10s).exit_code, 0) << "the loop still serves";
  EXPECT_EQ(daemon.stop(), 0) << "SIGTERM still works";
  ASSERT_EQ(kill(host.pid(), SIGUSR1), 0);  // the driver recovers
  EXPECT_FALSE(hung.wait(10s).timed_out);
}

// A reload's read is a process of its own (vfready-config): a file whose file system
// stops answering (a drop-in on a FUSE mount whose server is stopped: here the fake
// host's) holds that reader, never the loop. The reload is refused after its bound,
// another at once while the reader waits; the loop serves meanwhile; once the file
// system answers again and the reader has ended, a reload is read.
TEST(VfreadydReload, AFileSystemThatStopsAnsweringHoldsItsReaderNotTheLoop) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  const auto path = write_config(host, read_file(repo_config()));
  PrivateBus bus(PrivateBus::Policy::kShipped);
  ServiceDaemon daemon(host, path, "--bus-address " + bus.address());
  ASSERT_TRUE(serving(daemon, bus));
  const auto dir = host.root() + "/etc/vfready.d";
  ASSERT_EQ(sh("mkdir -p " + dir + " && ln -s " + host.pci("0000:18:00.0", "vendor") + " " + dir +
               "/50-fuse.json")
                .exit_code,
            0);
  ASSERT_EQ(kill(host.pid(), SIGSTOP), 0);
  const auto first = sh(vfreadyctl(bus, "reload"), 20s);
  const auto second = sh(vfreadyctl(bus, "reload"), 20s);
  const auto status = sh(vfreadyctl(bus, "status"), 10s);
  ASSERT_EQ(sh("rm " + dir + "/50-fuse.json").exit_code, 0);
  ASSERT_EQ(kill(host.pid(), SIGCONT), 0);
  EXPECT_EQ(first.exit_code, 1);
  EXPECT_THAT(first.err, HasSubstr(path + ": reading the configuration did not finish within"));
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_THAT(second.err, HasSubstr("an earlier read of the configuration has not returned"));
  EXPECT_EQ(status.exit_code, 0) << "the loop serves while the reader waits";
  EXPECT_THAT(problem_codes(bus), HasSubstr("reload-refused"));
  // The reader gets its answer (a file not on a local file system), and ends.
  EXPECT_TRUE(wait_until([&] { return sh(vfreadyctl(bus, "reload"), 20s).exit_code == 0; }, 30s));
  EXPECT_THAT(problem_codes(bus), Not(HasSubstr("reload-refused")));
  EXPECT_EQ(daemon.stop(), 0);
}
