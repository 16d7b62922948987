// SPDX-License-Identifier: Apache-2.0
// Each step of a VF's request, done, waiting and ended, on MemoryHost: probes held until
// the test lets them answer, and a udev whose adds and "done" the test gives.
#include "vfready/pipeline/vf_requests.hpp"

#include <gmock/gmock.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <map>
#include <set>

#include "pipeline_fixture.hpp"

namespace vfready::testing {
namespace {

using pipeline::VfRequest;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using Step = VfRequest::Step;
using Clock = vfready::host::Clock;

// udev as a test says: adds it announces, netdevs it is done with, an event fd it writes.
class ScriptedUdev final : public host::UdevWait {
 public:
  ScriptedUdev() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  ~ScriptedUdev() override { ::close(fd_); }
  ScriptedUdev(const ScriptedUdev&) = delete;
  ScriptedUdev& operator=(const ScriptedUdev&) = delete;

  void announce(const std::string& pci, int ifindex, const std::string& name) {
    added_[pci] = {ifindex, name};
    woken_.insert(pci);
    tell();
  }
  // udev is done with the netdev `ifindex` of VF `pci`.
  void done_with(const std::string& pci, int ifindex) {
    initialized_.insert(ifindex);
    woken_.insert(pci);
    tell();
  }
  // udev is done with netdev `ifindex`, its event's DEVPATH not under a PCI function (a
  // virtual netdev's): only a watch of the netdev itself routes it.
  void done_with_netdev(int ifindex) {
    initialized_.insert(ifindex);
    if (const auto it = netdevs_.find(ifindex); it != netdevs_.end()) {
      woken_.insert(it->second);
    }
    tell();
  }
  void watch_netdev(int /*fd*/, const model::PciAddress& pci, int ifindex) override {
    netdevs_[ifindex] = pci.str();
  }
  void watch(int /*fd*/, const model::PciAddress& pci) override { watched.insert(pci.str()); }
  void unwatch(int /*fd*/, const model::PciAddress& pci, int ifindex) override {
    watched.erase(pci.str());
    if (const auto it = netdevs_.find(ifindex); it != netdevs_.end() && it->second == pci.str()) {
      netdevs_.erase(it);
    }
  }
  [[nodiscard]] bool watches_netdev(int ifindex) const { return netdevs_.contains(ifindex); }
  std::set<std::string> watched;  // the VFs whose events wake the requests
  bool look = false;              // take_added answers "look in sysfs"
  int missed = 0;
  int asked = 0;  // looks that asked libudev

  bool no_fd = false;  // subscribe() has no descriptor to give
  int subscribe() override { return no_fd ? -1 : fd_; }
  bool take_woken(int /*fd*/, std::vector<model::PciAddress>* pcis) override {
    pcis->clear();
    for (const auto& pci : woken_) {
      pcis->push_back(model::PciAddress::parse(pci).value());
    }
    woken_.clear();
    return false;
  }
  std::optional<host::AddedNetdev> take_added(const model::PciAddress& pci,
                                              bool* out_look) override {
    *out_look = look;
    const auto it = added_.find(pci.str());
    if (look || it == added_.end()) {
      return std::nullopt;
    }
    auto netdev = it->second;
    added_.erase(it);
    return netdev;
  }
  void add_missed() override { ++missed; }
  bool busy = false;  // udev announces other functions' netdevs all the while
  Clock::time_point last_add() override { return busy ? Clock::now() : Clock::time_point{}; }
  bool initialized_now(int ifindex, Netdev /*netdev*/, bool ask) override {
    asked += ask ? 1 : 0;
    return initialized_.contains(ifindex);
  }

 private:
  void tell() const {
    const uint64_t one = 1;
    static_cast<void>(::write(fd_, &one, sizeof one));
  }
  int fd_;
  std::map<std::string, host::AddedNetdev> added_;
  std::set<int> initialized_;
  std::set<std::string> woken_;
  std::map<int, std::string> netdevs_;  // watched netdev -> its VF
};

class AVfRequest : public PipelineTest {
 protected:
  // `n` unbound VFs with their GUIDs set, each reported in the run's status.
  pipeline::PfRun& unbound(uint16_t n, const std::string& json = pipeline_config()) {
    EXPECT_EQ(host.set_autoprobe(pci(kPf), false), 0);
    EXPECT_EQ(host.set_num_vfs(pci(kPf), n), 0);
    EXPECT_EQ(host.set_autoprobe(pci(kPf), true), 0);
    planned = target(json);
    names.configure({kPf});
    pf_run = std::make_unique<pipeline::PfRun>(pipeline::PfRun{planned, config, scripted, names});
    auto& r = *pf_run;
    r.info = *host.read_pf(planned.pci, true);
    r.status.pci = planned.pci;
    for (uint16_t i = 0; i < n; ++i) {
      EXPECT_FALSE(host.set_vf_guid_ofed(pci(kPf), i, planned.vf.at(i).guid, {}));
      pipeline::VfWork vs;
      vs.index = i;
      vs.pci = r.info.vfs.at(i).pci;
      r.vfs.push_back(vs);
    }
    return r;
  }
  // One unbound VF whose probe takes someone else's GUID, on a PF without OFED's files
  // from then on: its GUID is set again over netlink.
  pipeline::PfRun& wrong_guid_without_ofed() {
    udev.look = true;
    auto& run = unbound(1);
    EXPECT_FALSE(host.set_vf_guid_ofed(pci(kPf), 0, model::Guid{0x99}, {}));  // taken at the probe
    host.pf(kPf).info.ofed_sriov = false;
    run.info.ofed_sriov = false;
    return run;
  }
  // One unbound VF whose call held at `held_at` (the test holds it) is never released:
  // past its bound the PF is stuck, and the VF is left to the rest of the pass with that
  // one problem. The problem's text.
  std::string expect_stuck_past_bound(Step held_at) {
    host.held_bound = std::chrono::milliseconds(20);
    auto& run = unbound(1);
    pipeline::VfRequests requests(run);
    requests.add(0);
    EXPECT_EQ(requests.requests().at(0).step, held_at);
    requests.run();  // nothing releases it: its bound passes
    EXPECT_EQ(requests.requests().at(0).step, Step::kToReadBack);
    EXPECT_EQ(run.vfs.at(0).problems.size(), 1U);
    if (run.vfs.at(0).problems.empty()) {
      return "";
    }
    EXPECT_EQ(run.vfs.at(0).problems[0].kind, model::EventKind::kPfStuck);
    return run.vfs.at(0).problems[0].text;
  }
  [[nodiscard]] const MemoryHost::Vf& vf(uint16_t i) { return host.pf(kPf).vfs.at(i); }
  [[nodiscard]] std::string vf_pci(uint16_t i) { return vf(i).pci.str(); }

  ScriptedUdev udev;
  pipeline::PfHost scripted{host, host, host, udev};
  std::unique_ptr<pipeline::PfRun> pf_run;
};

TEST_F(AVfRequest, ProbesOneVfAtATimeAndWaitsForTheProbesAnswer) {
  host.hold_probes = true;
  auto& run = unbound(2);
  pipeline::VfRequests requests(run);
  requests.add(0);
  requests.add(1);
  // The first probe is under way: it waits for its answer, the second for its turn.
  ASSERT_EQ(requests.requests().at(0).step, Step::kProbing);
  EXPECT_EQ(requests.requests().at(1).step, Step::kProbe);
  EXPECT_EQ(host.calls_named("probe").size(), 0U);  // made when it answers
  ASSERT_TRUE(host.release_probe());
  requests.advance();
  // Answered: the first VF waits for udev's add of its netdev; the second probe starts.
  EXPECT_EQ(requests.requests().at(0).step, Step::kNetdev);
  EXPECT_EQ(requests.requests().at(1).step, Step::kProbing);
  EXPECT_EQ(host.calls_named("probe").size(), 1U);
}

TEST_F(AVfRequest, LetsTheNextProbeStartWhileWhatItsProbeDidIsReadBack) {
  host.hold_probes = true;
  host.hold_probe_reads = true;
  auto& run = unbound(2);
  pipeline::VfRequests requests(run);
  requests.add(0);
  requests.add(1);
  ASSERT_TRUE(host.release_probe());  // VF 0's probe answers: its read-back is held
  requests.advance();
  EXPECT_EQ(requests.requests().at(0).step, Step::kReadBack);
  EXPECT_EQ(requests.requests().at(1).step, Step::kProbing) << "not waiting for the read-back";
  EXPECT_EQ(host.held_probes(), 2U);
  ASSERT_TRUE(host.release_probe());  // the oldest: VF 0's read-back
  requests.advance();
  EXPECT_EQ(requests.requests().at(0).step, Step::kNetdev);
  EXPECT_EQ(requests.requests().at(0).guid, planned.vf.at(0).guid) << "read back with it";
  EXPECT_EQ(requests.requests().at(1).step, Step::kProbing);
}

TEST_F(AVfRequest, FailsAVfItsProbeDidNotBindOnceTheReadBackSaysSo) {
  host.hold_probe_reads = true;
  auto& run = unbound(1);
  ASSERT_EQ(host.set_autoprobe(pci(kPf), false), 0);  // drivers_probe then binds nothing
  pipeline::VfRequests requests(run);
  requests.add(0);
  EXPECT_EQ(requests.requests().at(0).step, Step::kReadBack);
  ASSERT_TRUE(host.release_probe());
  requests.advance();
  EXPECT_EQ(requests.requests().at(0).step, Step::kToReadBack);
  ASSERT_EQ(run.vfs.at(0).problems.size(), 1U);
  EXPECT_THAT(run.vfs.at(0).problems.at(0).text, HasSubstr("is not bound to mlx5_core"));
}

TEST_F(AVfRequest, TakesProbeTurnsInTheOrderAddedAndHearsUdevWhileVfsAreStillAdded) {
  host.hold_probes = true;
  auto& run = unbound(4, pipeline_config().replace(pipeline_config().find("\"udev_ms\": 50"), 13,
                                                   "\"udev_ms\": 5000"));
  pipeline::VfRequests requests(run);
  const auto step = [&](std::size_t i) { return requests.requests().at(i).step; };
  requests.add(0);
  requests.add(1);
  // VF 0's probe answers while GUIDs are still being written: the next add sees it, and
  // the turn goes to the first in line.
  ASSERT_TRUE(host.release_probe());
  requests.add(2);
  EXPECT_EQ(step(0), Step::kNetdev);
  EXPECT_EQ(step(1), Step::kProbing);
  EXPECT_EQ(step(2), Step::kProbe);
  // udev's add of VF 0's netdev comes before the last VF is added: that add steps it.
  udev.announce(vf_pci(0), vf(0).ifindex, host.get(vf(0).ifindex)->name);
  requests.add(3);
  EXPECT_EQ(step(0), Step::kUdev);
  ASSERT_TRUE(host.release_probe());
  requests.advance();
  EXPECT_EQ(step(2), Step::kProbing);  // not 3, added after it
  EXPECT_EQ(step(3), Step::kProbe);
}

TEST_F(AVfRequest, GoesFromUdevsAddThroughNamingToItsReadBack) {
  // udev's bound long enough that only udev's event, not a bound, moves the VF on.
  auto& run = unbound(1, pipeline_config().replace(pipeline_config().find("\"udev_ms\": 50"), 13,
                                                   "\"udev_ms\": 5000"));
  pipeline::VfRequests requests(run);
  requests.add(0);
  ASSERT_EQ(requests.requests().at(0).step, Step::kNetdev);  // the probe answered at once
  udev.announce(vf_pci(0), vf(0).ifindex, host.get(vf(0).ifindex)->name);
  requests.advance();
  EXPECT_EQ(requests.requests().at(0).step, Step::kUdev);  // udev not done with it yet
  EXPECT_TRUE(requests.requests().at(0).announced);
  udev.done_with(vf_pci(0), vf(0).ifindex);
  const auto finished = requests.run();
  EXPECT_EQ(finished, std::set<std::size_t>{0});
  const auto& vs = run.vfs.at(0);
  EXPECT_EQ(vs.name, "ibs0v0");
  EXPECT_EQ(vs.guid, planned.vf.at(0).guid);
  EXPECT_TRUE(vs.problems.empty()) << model::texts(vs.problems).front();
  EXPECT_EQ(udev.missed, 0);
  EXPECT_EQ(udev.asked, 0);  // woken by its event, not by its second of waiting
}

TEST_F(AVfRequest, LooksInSysfsWhenNoAddIsToBeWaitedFor) {
  udev.look = true;
  auto& run = unbound(1);
  pipeline::VfRequests requests(run);
  requests.add(0);
  ASSERT_EQ(requests.requests().at(0).step, Step::kUdev);  // no wait for an add
  EXPECT_FALSE(requests.requests().at(0).announced);
  EXPECT_EQ(run.vfs.at(0).ifindex, vf(0).ifindex);  // found through sysfs
  udev.done_with(vf_pci(0), vf(0).ifindex);
  requests.run();
  EXPECT_EQ(run.vfs.at(0).name, "ibs0v0");
}

TEST_F(AVfRequest, IsWokenByItsNetdevsEventWhateverItsDevpath) {
  udev.look = true;  // its netdev is looked up in sysfs, then watched by ifindex
  auto& run = unbound(1, pipeline_config().replace(pipeline_config().find("\"udev_ms\": 50"), 13,
                                                   "\"udev_ms\": 5000"));
  pipeline::VfRequests requests(run);
  requests.add(0);
  ASSERT_EQ(requests.requests().at(0).step, Step::kUdev);
  udev.done_with_netdev(vf(0).ifindex);
  requests.run();
  EXPECT_EQ(run.vfs.at(0).name, "ibs0v0");
  EXPECT_EQ(udev.asked, 0);  // woken by the event, not by its second of waiting
}

TEST_F(AVfRequest, GivesUpOnAnAddThatDoesNotComeWithinItsBound) {
  auto& run = unbound(1);
  pipeline::VfRequests requests(run);
  requests.add(0);
  ASSERT_EQ(requests.requests().at(0).step, Step::kNetdev);
  udev.done_with(vf_pci(0), vf(0).ifindex);  // done, but its add is never heard
  requests.run();
  EXPECT_EQ(udev.missed, 1);
  EXPECT_EQ(run.vfs.at(0).name, "ibs0v0");
  EXPECT_TRUE(run.vfs.at(0).problems.empty());
}

TEST_F(AVfRequest, WaitsForItsAddUpToTheUdevBoundWhileUdevIsBehindWithOthers) {
  // udev_ms 400: an add is waited for 100 ms while udev is silent; this one never comes,
  // but udev is busy with other netdevs, so the request waits the whole bound before it
  // looks in sysfs (which names the VF all the same).
  auto json = pipeline_config();
  json.replace(json.find("\"udev_ms\": 50"), 13, "\"udev_ms\": 400");
  auto& run = unbound(1, json);
  udev.busy = true;
  pipeline::VfRequests requests(run);
  const auto start = Clock::now();
  requests.add(0);
  udev.done_with(vf_pci(0), vf(0).ifindex);  // done, but its add is never heard
  requests.run();
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(400));
  EXPECT_EQ(udev.missed, 1);
  EXPECT_EQ(run.vfs.at(0).name, "ibs0v0");
  EXPECT_TRUE(run.vfs.at(0).problems.empty());
}

TEST_F(AVfRequest, FailsAVfUdevIsNotDoneWithByTheBoundAskingLibudevOnTheWay) {
  auto& run = unbound(1);
  pipeline::VfRequests requests(run);
  requests.add(0);
  udev.announce(vf_pci(0), vf(0).ifindex, host.get(vf(0).ifindex)->name);
  const auto finished = requests.run();  // udev_ms 50: never done
  EXPECT_EQ(finished, std::set<std::size_t>{0});
  const auto& vs = run.vfs.at(0);
  ASSERT_FALSE(vs.problems.empty());
  EXPECT_EQ(vs.problems.front().kind, model::EventKind::kUdevTimeout);
  EXPECT_GE(udev.asked, 1);  // at its bound, libudev was asked
}

TEST_F(AVfRequest, LeavesAVfWhoseFirstProbeFailedToTheRestOfThePass) {
  auto& run = unbound(2);
  host.probe_fails.insert(vf_pci(0));
  udev.look = true;
  pipeline::VfRequests requests(run);
  requests.add(0);
  requests.add(1);
  udev.done_with(vf_pci(1), vf(1).ifindex);
  const auto finished = requests.run();
  EXPECT_EQ(requests.requests().at(0).step, Step::kToReadBack);
  EXPECT_EQ(finished, std::set<std::size_t>{1});
  ASSERT_EQ(run.vfs.at(0).problems.size(), 1U);
  EXPECT_EQ(run.vfs.at(0).problems[0].kind, model::EventKind::kVfProbeFailed);
}

TEST_F(AVfRequest, CountsAProbeNotAnsweredByItsBoundAsAStuckPf) {
  host.hold_probes = true;
  expect_stuck_past_bound(Step::kProbing);
}

TEST_F(AVfRequest, CountsAReadBackNotAnsweredByItsBoundAsAStuckPf) {
  host.hold_probe_reads = true;
  EXPECT_THAT(expect_stuck_past_bound(Step::kReadBack), HasSubstr("probe-read"));
}

TEST_F(AVfRequest, SaysAReadBackThatFailedFailedNotThatTheVfIsUnbound) {
  host.fail("probe-read", vfready::host::kHelperGone);  // its helper died, say
  auto& run = unbound(1);
  pipeline::VfRequests requests(run);
  requests.add(0);
  requests.run();
  EXPECT_EQ(requests.requests().at(0).step, Step::kToReadBack);
  ASSERT_EQ(run.vfs.at(0).problems.size(), 1U);
  EXPECT_EQ(run.vfs.at(0).problems[0].kind, model::EventKind::kVfProbeFailed);
  EXPECT_THAT(run.vfs.at(0).problems[0].text,
              HasSubstr("could not read what the probe of VF " + vf_pci(0) +
                        " did, its helper process ended before answering: vfready's helper"));
}

TEST_F(AVfRequest, SetsAWrongGuidAgainAndProbesOnceMore) {
  udev.look = true;
  auto& run = unbound(1);
  // Someone else's GUID in the files when the probe reads them: the port takes it.
  EXPECT_FALSE(host.set_vf_guid_ofed(pci(kPf), 0, model::Guid{0x99}, {}));
  pipeline::VfRequests requests(run);
  requests.add(0);
  ASSERT_EQ(requests.requests().at(0).step, Step::kUdev);
  udev.done_with(vf_pci(0), vf(0).ifindex);
  requests.advance();
  // Wrong GUID read back: its GUID set again, unbound, probed: a new netdev to wait for.
  const auto& r = requests.requests().at(0);
  EXPECT_TRUE(r.reprobed);
  ASSERT_EQ(r.step, Step::kUdev);
  EXPECT_EQ(host.calls_named("unbind").size(), 1U);
  udev.done_with(vf_pci(0), vf(0).ifindex);
  requests.run();
  const auto& vs = run.vfs.at(0);
  EXPECT_EQ(vs.guid, planned.vf.at(0).guid);
  EXPECT_TRUE(vs.problems.empty()) << model::texts(vs.problems).front();
  EXPECT_EQ(run.status.changes.vfs_rebound, 1U);
}

TEST_F(AVfRequest, EndsAVfWhoseGuidIsStillWrongAfterItsSecondProbe) {
  udev.look = true;
  auto& run = unbound(1);
  host.fail("guid", EIO);  // its GUID cannot be set again
  pipeline::VfRequests requests(run);
  // Probed with no GUID of its own (the files say 0): wrong, and setting it fails.
  host.pf(kPf).vfs.at(0).configured = model::Guid{0x99};
  requests.add(0);
  udev.done_with(vf_pci(0), vf(0).ifindex);
  requests.run();
  const auto& r = requests.requests().at(0);
  EXPECT_TRUE(r.reprobed);
  EXPECT_EQ(r.step, Step::kFinished);
  const auto& vs = run.vfs.at(0);
  ASSERT_EQ(vs.problems.size(), 1U);
  EXPECT_EQ(vs.problems[0].kind, model::EventKind::kGuidSetFailed);
  EXPECT_THAT(vs.problems[0].text, HasSubstr("sriov/0/"));
}

TEST_F(AVfRequest, LooksInSysfsAgainWhenTheNetdevUdevAnnouncedIsGoneByItsNaming) {
  auto& run = unbound(1);
  pipeline::VfRequests requests(run);
  requests.add(0);
  ASSERT_EQ(requests.requests().at(0).step, Step::kNetdev);
  // udev was behind: its add names a netdev of the VF's that is gone by now.
  constexpr int kGone = 9999;
  ASSERT_FALSE(host.get(kGone));
  udev.announce(vf_pci(0), kGone, "ib7");
  udev.done_with(vf_pci(0), kGone);
  udev.done_with(vf_pci(0), vf(0).ifindex);
  requests.run();
  const auto& vs = run.vfs.at(0);
  EXPECT_EQ(requests.requests().at(0).step, Step::kFinished);
  EXPECT_FALSE(requests.requests().at(0).announced);  // its netdev found in sysfs
  EXPECT_EQ(vs.ifindex, vf(0).ifindex);
  EXPECT_EQ(vs.name, "ibs0v0");
  EXPECT_TRUE(vs.problems.empty()) << model::texts(vs.problems).front();
}

TEST_F(AVfRequest, EndsWithTheProblemWhenTheKernelRefusesItsName) {
  udev.look = true;
  auto& run = unbound(1);
  host.fail("rename", EPERM);
  pipeline::VfRequests requests(run);
  requests.add(0);
  udev.done_with(vf_pci(0), vf(0).ifindex);
  const auto finished = requests.run();
  EXPECT_EQ(finished, std::set<std::size_t>{0});
  const auto& vs = run.vfs.at(0);
  ASSERT_EQ(vs.problems.size(), 1U) << model::texts(vs.problems).front();
  EXPECT_EQ(vs.problems[0].kind, model::EventKind::kLinkConfigFailed);
  EXPECT_THAT(vs.problems[0].text, HasSubstr("EPERM"));
  EXPECT_NE(vs.name, "ibs0v0");  // what the kernel has: read back
}

// A link request that does not answer within its deadline (rtnl_lock held by a driver)
// ends the VF's naming there: no request after it, the VF not judged, and one problem
// that says which request did not return (its PF is then stuck: settle_stuck()).
TEST_F(AVfRequest, EndsUnjudgedWhenALinkRequestOfItsNamingDoesNotReturn) {
  udev.look = true;
  auto& run = unbound(1);
  host.fail("rename", vfready::host::kStuck);
  pipeline::VfRequests requests(run);
  requests.add(0);
  udev.done_with(vf_pci(0), vf(0).ifindex);
  const auto finished = requests.run();
  EXPECT_EQ(finished, std::set<std::size_t>{0});
  EXPECT_EQ(requests.requests().at(0).step, Step::kFinished);
  const auto& vs = run.vfs.at(0);
  ASSERT_EQ(vs.problems.size(), 1U) << model::texts(vs.problems).front();
  EXPECT_EQ(vs.problems[0].kind, model::EventKind::kPfStuck);
  EXPECT_THAT(vs.problems[0].text,
              HasSubstr("a netlink change of ifindex " + std::to_string(vf(0).ifindex)));
  EXPECT_THAT(vs.problems[0].text, EndsWith(" did not return"));
  EXPECT_THAT(host.calls_named("rename"), SizeIs(1)) << "no request after it";
  EXPECT_THAT(host.calls_named("altname"), IsEmpty());
}

// Naming waits on each link request's answer (a helper makes it), not on the thread.
TEST_F(AVfRequest, WaitsOnEachLinkRequestOfItsNamingUntilItAnswers) {
  udev.look = true;
  auto& run = unbound(1);
  host.hold_link_requests = true;
  pipeline::VfRequests requests(run);
  requests.add(0);
  udev.done_with(vf_pci(0), vf(0).ifindex);
  requests.resume();
  ASSERT_EQ(requests.requests().at(0).step, Step::kName);
  ASSERT_EQ(host.held_probes(), 1U);  // its first request, under way
  EXPECT_FALSE(requests.waiting_on().fds.empty());
  int answered = 0;
  for (; requests.requests().at(0).step == Step::kName && answered < 20; ++answered) {
    EXPECT_EQ(host.held_probes(), 1U) << "one request at a time";
    ASSERT_TRUE(host.release_probe());
    requests.resume();
  }
  EXPECT_GE(answered, 2);  // the link looked up, then renamed with its MTU
  EXPECT_EQ(requests.finished(), std::set<std::size_t>{0});
  EXPECT_EQ(run.vfs.at(0).name, "ibs0v0");
  EXPECT_TRUE(run.vfs.at(0).problems.empty()) << model::texts(run.vfs.at(0).problems).front();
}

// One naming at a time on the node: a VF whose naming starts while another's requests
// are under way waits for its turn, and takes it when that naming ends.
TEST_F(AVfRequest, WaitsForItsNamingTurnWhileAnotherVfIsNamed) {
  udev.look = true;
  auto& run = unbound(2);
  host.hold_link_requests = true;
  pipeline::VfRequests requests(run);
  requests.add(0);
  requests.add(1);
  udev.done_with(vf_pci(0), vf(0).ifindex);
  udev.done_with(vf_pci(1), vf(1).ifindex);
  requests.resume();
  ASSERT_EQ(requests.requests().at(0).step, Step::kName);
  ASSERT_EQ(requests.requests().at(1).step, Step::kName);
  EXPECT_EQ(host.held_probes(), 1U) << "only the first naming has a request under way";
  EXPECT_THAT(requests.waiting_on().fds, Contains(run.names.turn_fd()));
  for (int turn = 0; !requests.ended() && turn < 40; ++turn) {
    EXPECT_LE(host.held_probes(), 1U);
    ASSERT_TRUE(host.release_probe());
    requests.resume();
  }
  EXPECT_EQ(requests.finished(), (std::set<std::size_t>{0, 1}));
  EXPECT_EQ(run.vfs.at(1).name, "ibs0v1");
}

// The PF's own netdev is named beside its VFs' probes, in a turn of its own, not at the
// end of the pass (where every PF's naming came at once, each waiting for the others'
// turns); its request is none of the VFs' finished.
TEST_F(AVfRequest, NamesItsPfBesideTheProbes) {
  host.hold_probes = true;
  auto& run = unbound(2);
  pipeline::VfRequests requests(run);
  requests.add(0);
  requests.add(1);
  requests.add_pf_naming();
  for (int turn = 0; !run.pf_named && turn < 40; ++turn) {
    requests.resume();
  }
  EXPECT_TRUE(run.pf_named);
  EXPECT_EQ(requests.requests().at(0).step, Step::kProbing);  // its probe still held
  const auto pf = host.by_name("ibs0");
  ASSERT_TRUE(pf.has_value());
  EXPECT_EQ(pf->ifindex, host.pf(kPf).info.ifindex);
  udev.look = true;
  for (int turn = 0; !requests.ended() && turn < 40; ++turn) {
    static_cast<void>(host.release_probe());
    udev.done_with(vf_pci(0), vf(0).ifindex);
    udev.done_with(vf_pci(1), vf(1).ifindex);
    requests.resume();
  }
  EXPECT_EQ(requests.finished(), (std::set<std::size_t>{0, 1}));
}

// Step "guids" and the requests it feeds (VfRequestFeed), driven by hand: `task` started
// in `slot`, resumed once what it waits on has come.
class AGuidFeed : public AVfRequest {
 protected:
  // `n` VFs, created and unbound, for assign_guids (their GUIDs written before do not
  // count: guids_written() counts from here).
  pipeline::PfRun& created(uint16_t n) {
    auto json = pipeline_config();
    json.replace(json.find("\"vfs\": 4"), 8, "\"vfs\": " + std::to_string(n));
    auto& run = unbound(n, json);
    run.vfs.clear();
    before = host.calls_named("guid").size();
    return run;
  }
  void resume() { std::exchange(slot.resume, {}).resume(); }
  [[nodiscard]] std::size_t guids_written() { return host.calls_named("guid").size() - before; }

  pipeline::TaskSlot slot;
  std::size_t before = 0;
};

TEST_F(AGuidFeed, TakesAProbesAnswerWhileTheNextGuidsAreWritten) {
  host.hold_probes = true;
  host.hold_guid_writes = true;
  auto& run = created(3);
  pipeline::VfRequests requests(run, 3);
  pipeline::VfRequestFeed feed(requests);
  auto task = pipeline::assign_guids(run, feed);
  task.start(slot);
  ASSERT_TRUE(host.release_probe());  // VF 0's GUID, written alone: its probe starts
  resume();
  ASSERT_EQ(requests.requests().size(), 1U);
  ASSERT_EQ(requests.requests().at(0).step, Step::kProbing);
  ASSERT_EQ(host.held_probes(), 2U) << "VF 0's probe and the write of VFs 1 and 2's GUIDs";
  ASSERT_TRUE(host.release_probe());  // the probe answers; the write does not yet
  resume();
  EXPECT_FALSE(task.done());
  EXPECT_EQ(host.held_probes(), 1U);
  EXPECT_EQ(requests.requests().at(0).step, Step::kNetdev) << "taken before the write answered";
  EXPECT_EQ(host.calls_named("probe").size(), 1U);
}

TEST_F(AGuidFeed, WritesNoMoreGuidsWhileEnoughVfsWaitForTheirProbe) {
  host.hold_probes = true;
  auto& run = created(14);
  pipeline::VfRequests requests(run, 14);
  pipeline::VfRequestFeed feed(requests);
  auto task = pipeline::assign_guids(run, feed);
  task.start(slot);
  // VF 0 alone, then two writes of four: VF 0 probes, eight wait for their turn.
  EXPECT_FALSE(task.done());
  EXPECT_EQ(guids_written(), 9U);
  EXPECT_EQ(requests.probes_in_line(), pipeline::VfRequestFeed::kAhead);
  ASSERT_TRUE(host.release_probe());
  resume();
  // VF 1 probes, seven wait: four more written, and waiting again.
  EXPECT_EQ(guids_written(), 13U);
  EXPECT_FALSE(task.done());
  while (!task.done() && host.release_probe()) {
    resume();
  }
  EXPECT_TRUE(task.done());
  EXPECT_EQ(guids_written(), 14U);
  EXPECT_EQ(run.vfs.size(), 14U);
}

// A VF of the count that the pass did not read (the host's read and step "vfs" leave
// none) is not written to: it ends with its problem, in its place, and the others go on.
TEST_F(AGuidFeed, LeavesAVfThePassDidNotReadAlone) {
  auto& run = created(3);
  run.info.vfs.resize(2);
  pipeline::VfRequests requests(run, 3);
  pipeline::VfRequestFeed feed(requests);
  auto task = pipeline::assign_guids(run, feed);
  task.start(slot);
  for (int turn = 0; turn < 20 && !task.done(); ++turn) {
    static_cast<void>(host.release_probe());
    resume();
  }
  ASSERT_TRUE(task.done());
  EXPECT_EQ(guids_written(), 2U);
  ASSERT_EQ(run.vfs.size(), 3U);
  EXPECT_EQ(run.vfs[2].index, 2U);
  ASSERT_EQ(run.vfs[2].problems.size(), 1U);
  EXPECT_EQ(run.vfs[2].problems[0].kind, model::EventKind::kVfMissing);
  EXPECT_THAT(run.vfs[2].problems[0].text, HasSubstr("not among the VFs the pass read"));
  EXPECT_TRUE(run.vfs[0].problems.empty());
  EXPECT_EQ(requests.requests().size(), 2U) << "no request for the VF not read";
}

TEST_F(AVfRequest, EndsAVfWhoseUnbindBeforeItsSecondProbeFails) {
  udev.look = true;
  auto& run = unbound(1);
  EXPECT_FALSE(host.set_vf_guid_ofed(pci(kPf), 0, model::Guid{0x99}, {}));  // taken at the probe
  host.fail("unbind", EBUSY);
  pipeline::VfRequests requests(run);
  requests.add(0);
  udev.done_with(vf_pci(0), vf(0).ifindex);
  requests.run();
  const auto& r = requests.requests().at(0);
  EXPECT_TRUE(r.reprobed);
  EXPECT_EQ(r.step, Step::kFinished);
  const auto& vs = run.vfs.at(0);
  ASSERT_EQ(vs.problems.size(), 1U) << model::texts(vs.problems).front();
  EXPECT_EQ(vs.problems[0].kind, model::EventKind::kUnbindFailed);
  EXPECT_THAT(vs.problems[0].text, HasSubstr("EBUSY"));
  EXPECT_EQ(host.calls_named("probe").size(), 1U);  // no second probe of a VF still bound
  EXPECT_EQ(run.status.changes.vfs_rebound, 0U);
}

TEST_F(AVfRequest, WaitsForItsTurnToProbeAgainWhileAnotherProbeIsUnderWay) {
  host.hold_probes = true;
  udev.look = true;
  auto& run = unbound(2, pipeline_config().replace(pipeline_config().find("\"udev_ms\": 50"), 13,
                                                   "\"udev_ms\": 5000"));
  EXPECT_FALSE(host.set_vf_guid_ofed(pci(kPf), 0, model::Guid{0x99}, {}));  // taken at the probe
  pipeline::VfRequests requests(run);
  const auto step = [&](std::size_t i) { return requests.requests().at(i).step; };
  requests.add(0);
  requests.add(1);
  ASSERT_TRUE(host.release_probe());
  requests.advance();
  ASSERT_EQ(step(0), Step::kUdev);
  ASSERT_EQ(step(1), Step::kProbing);
  udev.done_with(vf_pci(0), vf(0).ifindex);
  requests.advance();
  // Its GUID read back wrong: it waits for VF 1's probe before it touches the device.
  EXPECT_EQ(step(0), Step::kReprobe);
  EXPECT_TRUE(host.calls_named("unbind").empty());
  ASSERT_TRUE(host.release_probe());
  requests.advance();
  EXPECT_EQ(step(0), Step::kProbing);
  EXPECT_EQ(host.calls_named("unbind").size(), 1U);
}

TEST_F(AVfRequest, WaitsForItsGuidWriteThenItsUnbindBeforeItsSecondProbe) {
  udev.look = true;
  auto& run = unbound(1, pipeline_config().replace(pipeline_config().find("\"udev_ms\": 50"), 13,
                                                   "\"udev_ms\": 5000"));
  EXPECT_FALSE(host.set_vf_guid_ofed(pci(kPf), 0, model::Guid{0x99}, {}));  // taken at the probe
  host.hold_guid_writes = true;
  host.hold_unbinds = true;
  pipeline::VfRequests requests(run);
  const auto step = [&] { return requests.requests().at(0).step; };
  requests.add(0);
  udev.done_with(vf_pci(0), vf(0).ifindex);
  requests.advance();
  // Its GUID read back wrong: the write is under way, and nothing else touches the VF.
  ASSERT_EQ(step(), Step::kResetGuid);
  EXPECT_TRUE(host.calls_named("unbind").empty());
  requests.advance();  // a look before the answer changes nothing
  EXPECT_EQ(step(), Step::kResetGuid);
  ASSERT_TRUE(host.release_probe());
  requests.advance();
  ASSERT_EQ(step(), Step::kUnbinding);
  EXPECT_EQ(host.pf(kPf).vfs.at(0).configured, planned.vf.at(0).guid);
  EXPECT_TRUE(host.calls_named("unbind").empty());  // made when it answers
  ASSERT_TRUE(host.release_probe());
  requests.advance();
  // Unbound, probed again (at once here), its new netdev looked for.
  EXPECT_EQ(host.calls_named("unbind").size(), 1U);
  EXPECT_EQ(host.calls_named("probe").size(), 2U);
  EXPECT_EQ(step(), Step::kUdev);
  EXPECT_EQ(run.status.changes.vfs_rebound, 1U);
}

// A PF without OFED's files: the second GUID write is a netlink request (made in a
// helper on a real host), awaited as the OFED write is, then the unbind and the probe.
TEST_F(AVfRequest, SetsAWrongGuidAgainOverNetlinkAndProbesOnceMore) {
  auto& run = wrong_guid_without_ofed();
  pipeline::VfRequests requests(run);
  requests.add(0);
  udev.done_with(vf_pci(0), vf(0).ifindex);
  requests.advance();
  const auto& r = requests.requests().at(0);
  ASSERT_TRUE(r.reprobed);
  EXPECT_THAT(host.calls_named("netlink-guid"),
              ElementsAre(HasSubstr(" 0 " + planned.vf.at(0).guid.str())));
  EXPECT_EQ(host.calls_named("unbind").size(), 1U);
  udev.done_with(vf_pci(0), vf(0).ifindex);
  requests.run();
  const auto& vs = run.vfs.at(0);
  EXPECT_EQ(vs.guid, planned.vf.at(0).guid);
  EXPECT_TRUE(vs.problems.empty()) << model::texts(vs.problems).front();
  EXPECT_EQ(run.status.changes.vfs_rebound, 1U);
}

TEST_F(AVfRequest, EndsAVfWhoseSecondGuidWriteOverNetlinkIsRefused) {
  auto& run = wrong_guid_without_ofed();
  host.fail("netlink-guid", EPERM);
  pipeline::VfRequests requests(run);
  requests.add(0);
  udev.done_with(vf_pci(0), vf(0).ifindex);
  requests.run();
  EXPECT_EQ(requests.requests().at(0).step, Step::kFinished);
  const auto& vs = run.vfs.at(0);
  ASSERT_EQ(vs.problems.size(), 1U) << model::texts(vs.problems).front();
  EXPECT_EQ(vs.problems[0].kind, model::EventKind::kGuidSetFailed);
  EXPECT_THAT(vs.problems[0].text, AllOf(HasSubstr("through netlink"), HasSubstr("EPERM")));
  EXPECT_TRUE(host.calls_named("unbind").empty()) << "not unbound with its GUID unset";
}

TEST_F(AVfRequest, IsWokenByItsNetdevsEventsFromItsProbeToTheEndOfItsUdevStep) {
  udev.look = true;
  auto& run = unbound(2, pipeline_config().replace(pipeline_config().find("\"udev_ms\": 50"), 13,
                                                   "\"udev_ms\": 5000"));
  host.hold_probes = true;
  pipeline::VfRequests requests(run);
  requests.add(0);
  requests.add(1);
  // VF 0's probe is under way: its function's events are awaited. VF 1 waits its turn
  // to be probed: nothing of it is.
  ASSERT_EQ(requests.requests().at(0).step, Step::kProbing);
  EXPECT_THAT(udev.watched, ElementsAre(vf_pci(0)));
  ASSERT_TRUE(host.release_probe());
  requests.advance();
  ASSERT_EQ(requests.requests().at(0).step, Step::kUdev);
  EXPECT_THAT(udev.watched, ElementsAre(vf_pci(0), vf_pci(1)));  // VF 1 probed in turn
  EXPECT_TRUE(udev.watches_netdev(vf(0).ifindex));
  udev.done_with(vf_pci(0), vf(0).ifindex);
  requests.advance();
  EXPECT_EQ(requests.requests().at(0).step, Step::kFinished);
  // VF 0's renames are the pass's own: they wake nothing.
  EXPECT_FALSE(udev.watches_netdev(vf(0).ifindex));
  EXPECT_THAT(udev.watched, ElementsAre(vf_pci(1)));
}

TEST_F(AVfRequest, WhoseProbeFailsIsNoLongerWokenByItsFunctionsEvents) {
  udev.look = true;
  auto& run = unbound(1);
  host.probe_fails.insert(vf_pci(0));
  pipeline::VfRequests requests(run);
  requests.add(0);
  ASSERT_EQ(requests.requests().at(0).step, Step::kToReadBack);
  EXPECT_THAT(udev.watched, IsEmpty());
}

TEST_F(AVfRequest, IsAnsweredAtOnceWhenItsPfIsStuckBeforeItsProbe) {
  udev.look = true;
  auto& run = unbound(2);
  host.fail("probe", host::kStuck);  // the first probe never returns: its PF is stuck
  pipeline::VfRequests requests(run);
  requests.add(0);
  requests.add(1);
  const auto finished = requests.run();
  EXPECT_TRUE(finished.empty());
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(requests.requests().at(i).step, Step::kToReadBack) << i;
    ASSERT_EQ(run.vfs.at(i).problems.size(), 1U) << i;
    EXPECT_EQ(run.vfs.at(i).problems[0].kind, model::EventKind::kPfStuck) << i;
  }
}

TEST_F(AVfRequest, WithoutAUdevEventFdLooksAtEachAddWhetherUdevIsDone) {
  udev.look = true;
  udev.no_fd = true;
  auto& run = unbound(2, pipeline_config().replace(pipeline_config().find("\"udev_ms\": 50"), 13,
                                                   "\"udev_ms\": 5000"));
  pipeline::VfRequests requests(run);
  requests.add(0);
  ASSERT_EQ(requests.requests().at(0).step, Step::kUdev);
  udev.done_with(vf_pci(0), vf(0).ifindex);  // no descriptor tells the requests
  requests.add(1);                           // the next add looks, long before any bound
  EXPECT_EQ(requests.requests().at(0).step, Step::kFinished);
  udev.done_with(vf_pci(1), vf(1).ifindex);
  requests.advance();
  EXPECT_EQ(requests.run(), (std::set<std::size_t>{0, 1}));
  EXPECT_EQ(run.vfs.at(1).name, "ibs0v1");
}

}  // namespace
}  // namespace vfready::testing
