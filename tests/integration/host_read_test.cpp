// SPDX-License-Identifier: Apache-2.0
// The host's read before each pass, made by a worker process (vfready-read): a reader
// killed, a read that never returns, and a reader left behind at its bound.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bus_commands.hpp"
#include "daemon_run.hpp"
#include "private_bus.hpp"
#include "root_only.hpp"
#include "service_daemon.hpp"

using namespace vfready::testing;
using testing::Contains;
using testing::HasSubstr;
using testing::Not;

namespace {
std::vector<pid_t> forks_named(pid_t pid, const std::string& name) {
  const auto cmdline = read_file("/proc/" + std::to_string(pid) + "/cmdline");
  std::vector<pid_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const auto dir = entry.path().string();
    const auto other = entry.path().filename().string();
    if (other.find_first_not_of("0123456789") == std::string::npos &&
        other != std::to_string(pid) && trimmed(read_file(dir + "/comm")) == name &&
        read_file(dir + "/cmdline") == cmdline && !cmdline.empty()) {
      out.push_back(std::stoi(other));
    }
  }
  return out;
}

// The fake host's server stopped (SIGSTOP), as long as this lives: its file system then
// answers nothing, as a driver's show() that never returns.
class StoppedHost {
 public:
  explicit StoppedHost(const FakeHost& host) : pid_(host.pid()) {
    stopped_ = ::kill(pid_, SIGSTOP) == 0;
  }
  ~StoppedHost() { resume(); }
  StoppedHost(const StoppedHost&) = delete;
  StoppedHost& operator=(const StoppedHost&) = delete;
  [[nodiscard]] bool stopped() const { return stopped_; }
  void resume() {
    if (stopped_) {
      ::kill(pid_, SIGCONT);
      stopped_ = false;
    }
  }

 private:
  pid_t pid_;
  bool stopped_ = false;
};

// When vfreadyd logged the first line with `part`, in seconds of its day (its log's
// stamp, 2026-12-08T01:06:35.526Z); nullopt when no line has it.
std::optional<double> logged_at(const std::string& log, const std::string& part) {
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find(part) != std::string::npos && line.size() > 23 && line[10] == 'T') {
      return std::stoi(line.substr(11, 2)) * 3600.0 + std::stoi(line.substr(14, 2)) * 60.0 +
             std::stod(line.substr(17, 6));
    }
  }
  return std::nullopt;
}

bool logs(const ServiceDaemon& daemon, const std::string& part, std::chrono::milliseconds bound) {
  return wait_until([&] { return daemon.log().find(part) != std::string::npos; }, bound);
}

constexpr const char* kGaveUp = "its reader (vfready-read) read nothing more for 5000 ms";

}  // namespace

// The host's reader dies while it waits for a module (an OOM kill, say): the pass stops
// with that said, before any write; as any first bring-up that failed, vfreadyd exits 1
// for systemd to start it again.
TEST(VfreadydHostRead, AReaderKilledMidReadStopsItsPassAndSaysSo) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.json()["modules"]["ib_ipoib"] = {{"loads_on_signal", true}};
  FakeHost host(t);
  ServiceDaemon daemon(host, write_config(host, read_file(repo_config())), "--no-bus");
  ASSERT_TRUE(
      daemon.notify().wait_for("STATUS=Waiting up to 30000 ms for modules to load: ib_ipoib", 20s))
      << daemon.log();
  std::vector<pid_t> readers;
  ASSERT_TRUE(wait_until(
      [&] { return !(readers = forks_named(daemon.process().pid(), "vfready-read")).empty(); }, 5s))
      << "no vfready-read of this daemon's";
  ASSERT_EQ(readers.size(), 1U);
  ASSERT_EQ(::kill(readers.front(), SIGKILL), 0);
  EXPECT_TRUE(wait_until(
      [&] {
        return daemon.log().find(
                   "reading the host failed: its reader (vfready-read) ended "
                   "without an answer") != std::string::npos;
      },
      20s))
      << daemon.log();
  EXPECT_EQ(daemon.process().wait(10s).exit_code, 1) << daemon.log();
  EXPECT_THAT(daemon.notify().received(), Not(Contains("READY=1")));
  EXPECT_TRUE(host.writes().empty()) << "nothing is written on a read that did not end";
}

// sysfs stops answering while the host's reader waits for a module at boot (the fake
// host's file system stopped: a read that never returns, as a driver's show() can): the
// pass stops once the reader has told nothing for its bound (5 s here) on top of the
// modules wait (6 s), before any write, and vfreadyd waits for the reader rather than exit
// (a restart would meet the same read). Once sysfs answers and the module loads, the
// reader ends, the host is read again, and READY=1 follows.
TEST(VfreadydHostRead, AReadThatNeverReturnsAtBootStopsItsPassAtItsBoundAndIsWaitedFor) {
  VFREADY_REQUIRE_ROOT();
  auto t = TopologyBuilder::reference().probe_ms(1);
  t.json()["modules"]["ib_ipoib"] = {{"loads_on_signal", true}};
  FakeHost host(t);
  auto text = read_file(repo_config());
  text.replace(text.rfind('}'), 1, R"(, "timeouts": {"modules_ms": 6000, "device_call_ms": 100}})");
  ServiceDaemon daemon(host, write_config(host, text), "--no-bus");
  ASSERT_TRUE(
      daemon.notify().wait_for("STATUS=Waiting up to 6000 ms for modules to load: ib_ipoib", 20s))
      << daemon.log();
  StoppedHost stopped(host);
  ASSERT_TRUE(stopped.stopped());
  ASSERT_TRUE(logs(daemon, "the host is read again once it has, and READY=1 follows", 40s))
      << daemon.log();
  EXPECT_FALSE(daemon.process().exited()) << daemon.log();
  EXPECT_TRUE(host.writes().empty());
  const auto log = daemon.log();
  const auto waiting = logged_at(log, "Waiting up to 6000 ms for modules to load");
  const auto gave_up = logged_at(log, kGaveUp);
  ASSERT_TRUE(waiting && gave_up) << log;
  // Its bound ran from the reader's word that it waits: the modules' 6 s, then 5 s.
  const double took = *gave_up - *waiting + (*gave_up < *waiting ? 86400 : 0);  // midnight
  EXPECT_GE(took, 10.9) << log;
  EXPECT_LE(took, 14.0) << log;
  stopped.resume();
  ASSERT_EQ(::kill(host.pid(), SIGUSR1), 0);  // the module loads
  EXPECT_TRUE(logs(daemon, "the host's reader left behind has ended: reading the host again", 30s))
      << daemon.log();
  EXPECT_TRUE(daemon.notify().wait_for("READY=1", 60s)) << daemon.log();
  EXPECT_EQ(daemon.stop(), 0) << daemon.log();
}

// After READY, a pass whose read never returns stops at its bound; its reader is kept:
// a pass asked meanwhile stops before it reads, saying an earlier read has not ended;
// once the reader's read returns and it ends, a pass over every PF makes the node ready.
TEST(VfreadydHostRead, AReaderGivenUpOnHoldsBackTheNextReadsUntilItEnds) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  auto text = read_file(repo_config());
  text.replace(text.rfind('}'), 1, R"(, "timeouts": {"device_call_ms": 100}})");
  PrivateBus bus(PrivateBus::Policy::kShipped);
  ServiceDaemon daemon(host, write_config(host, text), "--bus-address " + bus.address());
  ASSERT_TRUE(serving(daemon, bus));
  ASSERT_TRUE(daemon.notify().wait_for("READY=1", 60s)) << daemon.log();
  StoppedHost stopped(host);
  ASSERT_TRUE(stopped.stopped());
  ASSERT_EQ(sh(vfreadyctl(bus, "reconcile"), 20s).exit_code, 0);
  ASSERT_TRUE(logs(daemon, kGaveUp, 30s)) << daemon.log();
  ASSERT_EQ(sh(vfreadyctl(bus, "reconcile"), 20s).exit_code, 0);
  EXPECT_TRUE(logs(daemon, "an earlier read has not ended", 20s)) << daemon.log();
  stopped.resume();
  EXPECT_TRUE(logs(daemon, "the host's reader left behind has ended: reading the host again", 30s))
      << daemon.log();
  EXPECT_EQ(sh(vfreadyctl(bus, "wait --timeout 60"), 70s).exit_code, 0) << daemon.log();
  EXPECT_EQ(daemon.stop(), 0) << daemon.log();
}
