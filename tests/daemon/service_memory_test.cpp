// SPDX-License-Identifier: Apache-2.0
// The whole service on MemoryHost, without root: its loop, signals, passes, reload, drift
// of a name and a call into a driver that hangs and later returns. What it tells systemd is read
// from a notifier of the test's; the test acts on it from the loop's thread, as systemd or an
// operator would (a signal), and stops the service with SIGTERM.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "memory_host_access.hpp"
#include "service.hpp"
#include "vfready/model/config.hpp"

namespace vfready::daemon {
namespace {

using testing::MemoryHost;
using testing::MemoryHostAccess;
namespace fs = std::filesystem;

using testing::kPf0;
using testing::kPf1;

// What the service tells systemd, each datagram handed to `on` on the loop's thread.
class TestNotifier final : public host::Notifier {
 public:
  bool notify(std::string_view assignments) override {
    sent.emplace_back(assignments);
    if (on) {
      on(sent.back());
    }
    return true;
  }
  std::vector<std::string> sent;
  std::function<void(const std::string&)> on;
};

// Ends the test process's wait on a service that never stops: SIGTERM after `bound`.
class Backstop {
 public:
  explicit Backstop(std::chrono::seconds bound)
      : thread_([this, bound] {
          std::unique_lock lock(mu_);
          if (!cv_.wait_for(lock, bound, [this] { return done_; })) {
            ::kill(::getpid(), SIGTERM);  // the service's loop takes it: run() returns
          }
        }) {}
  ~Backstop() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_one();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::jthread thread_;
};

class AServiceOnMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/vfready-service-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fs::create_directories(dir_ + "/sys");
    fs::create_directories(dir_ + "/proc");
    std::ofstream(dir_ + "/kmsg").flush();
    testing::add_two_pfs(*host);
    // The signals the service takes are blocked before any thread starts (the backstop's
    // too), as vfreadyd's main blocks them in every thread.
    sigset_t signals;
    sigemptyset(&signals);
    for (int s : {SIGTERM, SIGINT, SIGHUP, SIGUSR2}) {
      sigaddset(&signals, s);
    }
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `timeouts`: more of them, each `"key": value, `; udev_ms and port_active_ms are short
  // unless `defaults` (vfready's own bounds: a test skips the clock past them).
  // `entry`: more keys of the entry, each `"key": value, `.
  void write_config(int vfs, const std::string& timeouts = "", bool defaults = false,
                    const std::string& entry = "") const {
    const std::string bounds =
        defaults ? R"("modules_ms": 30000)" : R"("udev_ms": 50, "port_active_ms": 300)";
    std::ofstream(config_path()) << R"({"pfs": [{"select": {"pci": [")" << kPf0 << R"(", ")" << kPf1
                                 << R"("]}, "vfs": )" << vfs << R"(,
      )" << entry << R"("pf_name": "ibs{pf_index}", "vf_name": "ibs{pf_index}v{vf}"}],
      "timeouts": {)" << timeouts << bounds
                                 << R"(},
      "publish": {"status_file": ")"
                                 << dir_ << R"(/status.json", "nfd_file": false,
                  "metrics_file": false}})";
  }
  [[nodiscard]] std::string config_path() const { return dir_ + "/vfready.json"; }

  // Runs the service until it stops; its exit code.
  int run(Service& service) {
    const Backstop backstop(std::chrono::seconds(30));
    return service.run();
  }
  std::unique_ptr<Service> service() {
    auto config = model::parse_config({{config_path(), read(config_path())}});
    EXPECT_TRUE(config) << config.error().message;
    ServiceOptions options;
    options.config_path = config_path();
    options.roots = {dir_ + "/sys", dir_ + "/proc", dir_ + "/kmsg"};
    BringupInputs in{config.value(), {}, options.roots};
    in.host_access = std::make_shared<MemoryHostAccess>(host);
    return std::make_unique<Service>(options, std::move(in), notifier);
  }
  static std::string read(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), {}};
  }

  std::string dir_;
  std::shared_ptr<MemoryHost> host = std::make_shared<MemoryHost>();
  TestNotifier notifier;
};

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

TEST_F(AServiceOnMemory, IsReadyThenAppliesAReloadAndStopsOnSigterm) {
  write_config(2);
  auto svc = service();
  int readies = 0;
  notifier.on = [&](const std::string& m) {
    if (starts_with(m, "READY=1\nSTATUS=ready")) {
      ++readies;
      write_config(3);  // the operator edits the file and reloads
      ::raise(SIGHUP);
    } else if (svc->status().passes_finished == 2 && starts_with(m, "STATUS=ready")) {
      ::raise(SIGTERM);
    }
  };
  EXPECT_EQ(run(*svc), 0);
  EXPECT_EQ(readies, 1);
  const auto& status = svc->status();
  EXPECT_EQ(status.config_generation, 2U);
  EXPECT_EQ(status.passes_finished, 2U);
  ASSERT_EQ(status.pfs.size(), 2U);
  for (const auto& pf : status.pfs) {
    EXPECT_EQ(pf.state, model::PfState::kReady) << pf.pci.str();
    EXPECT_EQ(pf.vfs.size(), 3U) << pf.pci.str();
  }
  EXPECT_EQ(host->pf(kPf0).numvfs, 3);
  EXPECT_NE(read(dir_ + "/status.json").find("\"ready\""), std::string::npos);
  EXPECT_EQ(notifier.sent.back(), "STOPPING=1");
}

TEST_F(AServiceOnMemory, BringsAStuckPfUpOnceItsCallReturns) {
  write_config(2);
  // The second sriov_numvfs write of the pass does not return: that PF is stuck, the
  // other is brought up, and the node is ready (degraded).
  host->fail("numvfs", host::kStuck, /*after=*/1);
  auto svc = service();
  std::string stuck;
  notifier.on = [&](const std::string& m) {
    if (starts_with(m, "READY=1")) {
      for (const auto& pf : svc->status().pfs) {
        if (pf.state == model::PfState::kStuck) {
          stuck = pf.pci.str();
        }
      }
      host->unstick(stuck);  // the driver returns; the service hears it
      host::Clock::skip(std::chrono::seconds(1));
    } else if (starts_with(m, "STATUS=ready: 2/2")) {
      ::raise(SIGTERM);
    }
  };
  EXPECT_EQ(run(*svc), 0);
  EXPECT_FALSE(stuck.empty()) << "no PF was stuck after the first pass";
  const auto& status = svc->status();
  ASSERT_EQ(status.pfs.size(), 2U);
  for (const auto& pf : status.pfs) {
    EXPECT_EQ(pf.state, model::PfState::kReady) << pf.pci.str();
    // Left off while stuck (its VFs wait unbound), on again once brought up.
    EXPECT_TRUE(host->pf(pf.pci.str()).autoprobe) << pf.pci.str();
  }
  EXPECT_EQ(status.passes_finished, 2U);
}

TEST_F(AServiceOnMemory, RepairsAVfRenamedAwayFromItsName) {
  write_config(2);
  auto svc = service();
  int ifindex = 0;
  std::string name;
  notifier.on = [&](const std::string& m) {
    if (starts_with(m, "READY=1")) {
      // Someone renames a VF's netdev and sets its MTU: two link events, one drift of its
      // PF (as would be the pass's own events read after it, each judged by the link now).
      const auto& vf = svc->status().pfs.at(0).vfs.at(1);
      ifindex = vf.ifindex;
      name = vf.name;
      ASSERT_EQ(host->rename(ifindex, "drifted"), 0);
      ASSERT_EQ(host->set_mtu(ifindex, 2044), 0);
    } else if (svc->status().passes_finished == 2 && starts_with(m, "STATUS=ready")) {
      ::raise(SIGTERM);
    }
  };
  EXPECT_EQ(run(*svc), 0);
  ASSERT_NE(ifindex, 0) << "the service was never ready";
  const auto& status = svc->status();
  EXPECT_EQ(status.drift_events, 1U);
  EXPECT_EQ(status.passes_finished, 2U);
  ASSERT_TRUE(host->get(ifindex).has_value());
  EXPECT_EQ(host->get(ifindex)->name, name);  // renamed back by the reconcile pass
  ASSERT_FALSE(status.recent_events.empty());
  EXPECT_EQ(status.recent_events.back().pf, kPf0);
  for (const auto& pf : status.pfs) {
    EXPECT_EQ(pf.state, model::PfState::kReady) << pf.pci.str();
  }
}

// The kernel sends no link event as an altname is added to a link that is down: a VF's
// last event before its pass's altname shows it without one, and may be read after the
// pass. Such an event is no drift; an altname an event showed and a later one does not is.
TEST_F(AServiceOnMemory, RepairsAnAltnameDeletedNotOneALateEventShowsMissing) {
  write_config(2, "", false, R"("vf_altnames": ["vf-{vf_pci}"], )");
  auto svc = service();
  int ifindex = 0;
  std::string alt;
  notifier.on = [&](const std::string& m) {
    const auto& status = svc->status();
    if (starts_with(m, "READY=1")) {
      const auto& vf = status.pfs.at(0).vfs.at(1);
      ifindex = vf.ifindex;
      ASSERT_EQ(vf.altnames.size(), 1U);
      alt = vf.altnames.front();
      // Read late: VF 1's event from before its altname. With it, VF 0 renamed away: a
      // drift, whose pass ends the first phase.
      host->announce({.ifindex = ifindex,
                      .name = vf.name,
                      .mtu = 2044,
                      .altnames = std::vector<std::string>{}});
      ASSERT_EQ(host->rename(status.pfs.at(0).vfs.at(0).ifindex, "drifted"), 0);
    } else if (status.passes_finished == 2 && starts_with(m, "STATUS=ready")) {
      // Shown with its altname (the link set up), then without it (deleted).
      host->announce_link(ifindex);
      ASSERT_EQ(host->del_altname(ifindex, alt), 0);
      host->announce_link(ifindex);
    } else if (status.passes_finished == 3 && starts_with(m, "STATUS=ready")) {
      ::raise(SIGTERM);
    }
  };
  EXPECT_EQ(run(*svc), 0);
  ASSERT_NE(ifindex, 0) << "the service was never ready";
  const auto& status = svc->status();
  EXPECT_EQ(status.passes_finished, 3U);
  EXPECT_EQ(status.drift_events, 2U) << "the rename and the deleted altname, not the late event";
  ASSERT_TRUE(host->get(ifindex).has_value());
  EXPECT_EQ(host->get(ifindex)->altnames, std::vector<std::string>{alt});
  std::vector<std::string> messages;
  for (const auto& e : status.recent_events) {
    messages.push_back(e.message);
  }
  EXPECT_THAT(messages, ::testing::Contains(::testing::HasSubstr("lost its altname " + alt)));
}

TEST_F(AServiceOnMemory, BringsUpThePfsAStuckLinkRequestHeldOnceItReturns) {
  // After READY, a VF is renamed away, and the rename back by the reconcile pass does not
  // return (a driver holds rtnl_lock): that pass ends with the VF's PF stuck. Once the
  // request returns, the service brings the PFs it held up again.
  write_config(2);
  auto svc = service();
  int ifindex = 0;
  std::string name;
  std::vector<model::Problem> stuck_with;
  notifier.on = [&](const std::string& m) {
    const auto& status = svc->status();
    if (starts_with(m, "READY=1")) {
      const auto& vf = status.pfs.at(0).vfs.at(1);
      ifindex = vf.ifindex;
      name = vf.name;
      ASSERT_EQ(host->rename(ifindex, "drifted"), 0);
      host->fail("rename", host::kStuck);  // from the next rename on
    } else if (status.passes_finished == 2 && stuck_with.empty()) {
      stuck_with = status.pfs.at(0).problems;
      EXPECT_EQ(status.pfs.at(0).state, model::PfState::kStuck);
      EXPECT_EQ(status.pfs.at(1).state, model::PfState::kReady) << "not in that pass";
      host->unstick(host::kLinksKey);  // the driver lets go; the service hears it
      host::Clock::skip(std::chrono::seconds(1));
    } else if (status.passes_finished == 3 && starts_with(m, "STATUS=ready")) {
      ::raise(SIGTERM);
    }
  };
  EXPECT_EQ(run(*svc), 0);
  ASSERT_EQ(stuck_with.size(), 1U) << "the reconcile pass did not end with one problem";
  EXPECT_EQ(stuck_with[0].kind, model::EventKind::kPfStuck);
  EXPECT_NE(stuck_with[0].text.find("did not return"), std::string::npos) << stuck_with[0].text;
  const auto& status = svc->status();
  EXPECT_EQ(status.passes_finished, 3U);
  for (const auto& pf : status.pfs) {
    EXPECT_EQ(pf.state, model::PfState::kReady) << pf.pci.str();
  }
  ASSERT_TRUE(host->get(ifindex).has_value());
  EXPECT_EQ(host->get(ifindex)->name, name);  // renamed back by the third pass
}

TEST_F(AServiceOnMemory, IsReadyDegradedWhenAPortStaysInitForItsWholeMinute) {
  // vfready's own bounds: a port is waited for 60 s to reach ACTIVE. The subnet manager
  // never activates PF 0's port; the test skips the clock past the minute at a look
  // again of PF 0's port once PF 1 is ready (a skip while PF 1's pass went on would
  // reach its bounds too), rather than wait for it.
  write_config(2, "", /*defaults=*/true);
  host->pf(kPf0).info.ports.front().state = "2: INIT";
  std::unique_ptr<Service> svc;
  std::size_t pf0_reads = 0;
  std::size_t at_skip = 0;
  host->on_port_read = [&](const model::PciAddress& pci) {
    if (pci.str() != kPf0 || ++pf0_reads < 2 || at_skip != 0) {
      return;  // its validate read is the first
    }
    for (const auto& pf : svc->status().pfs) {
      if (pf.pci.str() == kPf1 && pf.state == model::PfState::kReady) {
        at_skip = host->port_reads;
        host::Clock::skip(std::chrono::seconds(61));
      }
    }
  };
  svc = service();
  std::string ready;
  notifier.on = [&](const std::string& m) {
    if (starts_with(m, "READY=1")) {
      ready = m;
      ::raise(SIGTERM);
    }
  };
  EXPECT_EQ(run(*svc), 0);
  EXPECT_NE(ready.find("STATUS=degraded: 1/2"), std::string::npos) << ready;
  EXPECT_EQ(host->port_reads, at_skip) << "PF 0's port was looked at again past its bound";
  const auto& pf0 = svc->status().pfs.at(0);
  EXPECT_EQ(pf0.state, model::PfState::kFailed);
  ASSERT_EQ(pf0.problems.size(), 1U);
  EXPECT_EQ(pf0.problems[0].kind, model::EventKind::kPortNotActive);
  EXPECT_NE(pf0.problems[0].text.find("not ACTIVE after 60000 ms"), std::string::npos)
      << pf0.problems[0].text;
  EXPECT_EQ(svc->status().pfs.at(1).state, model::PfState::kReady);
}

TEST_F(AServiceOnMemory, ExitsNotReadyWhenNoPfComesUpAtBoot) {
  write_config(2);
  host->probe_fails.insert(host->pf(kPf0).info.vf_address(0)->str());
  host->probe_fails.insert(host->pf(kPf1).info.vf_address(1)->str());
  auto svc = service();
  EXPECT_EQ(run(*svc), 1);  // systemd marks the unit failed; kubelet stays back
  EXPECT_EQ(svc->status().state, model::DaemonState::kFailed);
  EXPECT_NE(notifier.sent.back().find("ERRNO=5"), std::string::npos) << notifier.sent.back();
}

}  // namespace
}  // namespace vfready::daemon
