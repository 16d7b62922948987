// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "vfready/host/sriov_calls.hpp"
#include "vfready/model/guid.hpp"
#include "vfready/pipeline/pf_run.hpp"
#include "vfready/pipeline/task.hpp"

// A PF's VFs after their GUIDs are set, each a request: its probe, its netdev (as udev's
// add names it), udev done with it, its name, its read-back, and once, should its port
// not have taken its GUID, the GUID again and another probe. Each step of a request
// answers done (the next runs at once), waiting (on its probe's answer, on udev, or until
// a bound) or finished. A request's working state is its own, with its VF's (run.vfs[at],
// a VfWork); the VF's report is written from that when the PF's pass ends.
//
// One probe is under way at a time, in order (the driver's device lock takes them one
// by one anyway): probes are a PF's critical path, and the rest of each VF goes on
// beside the next one's probe. The requests run on the thread that owns `run`; they wait
// on the probe's descriptor and udev's together, never on one alone.
namespace vfready::pipeline {

// What a VF's naming answers. kGone: the announced netdev is not there (udev was behind
// and named an older one of the VF's, or it moved to another namespace); nothing is
// reported of it, and the VF's netdev is for the caller to look up again. A netdev not
// announced that is gone is a `netdev-gone` problem, and kNamed. kStuck: a link request
// did not answer within its deadline (the VF has a kPfStuck problem that says which; its
// PF is stuck).
enum class Naming : uint8_t { kNamed, kGone, kStuck };

// A VF's naming under way (name_vf(), steps.hpp): the node's naming turn it holds
// (ended as this goes), its task and what that waits on. Made before the turn is taken.
struct NamingUnderWay {
  explicit NamingUnderWay(NameRegistry& names) : turn(names) {}
  NamingTurn turn;
  TaskSlot slot;
  std::optional<Task<Naming>> task;
};

struct VfRequest {
  enum class Step : uint8_t {
    kProbe,       // waiting for its turn to probe
    kProbing,     // its probe is under way
    kReadBack,    // its binding and GUID read back, beside the next VF's probe
    kNetdev,      // waiting for udev's add to name its netdev
    kUdev,        // waiting for udev to be done with it
    kName,        // name, altnames, MTU
    kValidate,    // its GUID and names read back
    kReprobe,     // waiting for its turn to set its GUID again and probe once more
    kResetGuid,   // its GUID written again (OFED's files), in its turn
    kUnbinding,   // unbound from its driver, in its turn, before its second probe
    kFinished,    // judged
    kToReadBack,  // its probe failed: the rest of the pass reads it back with the VFs not probed
  };
  using Clock = host::Clock;

  std::size_t at = 0;  // its VF: run.vfs[at]
  Step step = Step::kProbe;
  bool reprobed = false;   // its GUID was set again and it was probed once more
  bool announced = false;  // its netdev is the one udev's add named (not looked up)
  bool listed = false;     // in VfRequests::waiting_ (on a call, or its naming)
  bool on_udev = false;    // in VfRequests::on_udev_ (kNetdev, kUdev)
  bool pf = false;         // the PF's own naming (add_pf_naming()), not a VF's request
  int watched = 0;         // the netdev whose udev events wake it
  std::unique_ptr<host::StartedCall<int>> probe_call;                   // kProbing
  std::unique_ptr<host::StartedProbe> read_call;                        // kReadBack
  std::unique_ptr<host::StartedCall<host::OfedGuidErrors>> guid_call;   // kResetGuid (OFED)
  std::unique_ptr<host::StartedCall<host::LinkAnswer>> link_guid_call;  // kResetGuid (netlink)
  std::unique_ptr<host::StartedCall<int>> unbind_call;                  // kUnbinding
  std::unique_ptr<NamingUnderWay> naming;                               // kName
  std::optional<model::Guid> guid;                                      // read back with its probe
  Clock::time_point netdev_until{};  // how long udev's add is waited for (see netdev())
  Clock::time_point udev_until{};    // how long udev's "done" is waited for
  Clock::time_point ask_at{};        // when libudev is asked (an event may have been missed)
};

class VfRequests {
 public:
  using Clock = VfRequest::Clock;
  // `expected`: how many requests are added, to reserve room for (0: as they come).
  explicit VfRequests(PfRun& run, std::size_t expected = 0);
  ~VfRequests();
  VfRequests(const VfRequests&) = delete;
  VfRequests& operator=(const VfRequests&) = delete;

  // The VF at run.vfs[at], its GUID set: from its probe (kProbe), or its
  // GUID set again first (kReprobe). Moves it as far as it goes at once, and the others
  // an event or a bound has come for.
  void add(std::size_t at, VfRequest::Step first = VfRequest::Step::kProbe);
  // The PF's netdev named (name_pf()) in a turn of its own, beside the VFs' probes, as
  // a request that is named and ends: not at the end of the pass, where every PF's
  // naming came at once and each waited for the others' turns.
  void add_pf_naming();
  // How many wait in line for their probe behind the one under way (0 when none is).
  [[nodiscard]] std::size_t probes_in_line() const { return probing_ ? in_line_.size() : 0; }
  // Moves every request as far as it goes without waiting.
  void advance();
  // Runs every request to its end, waiting here as they ask; finished().
  std::set<std::size_t> run();
  // For a driver that waits for them: what the requests wait on now (until ended()),
  // and, once that has come (or not: a look too early is harmless), their next steps.
  // The same Wait each time, made again (its list of fds keeps its room between turns).
  [[nodiscard]] const Wait& waiting_on();
  void resume();
  [[nodiscard]] bool ended() const;
  // The VFs finished (indexes in run.vfs), not those left to the rest of the pass.
  [[nodiscard]] std::set<std::size_t> finished() const;
  // Where each request is, in the order added.
  [[nodiscard]] const std::vector<VfRequest>& requests() const { return requests_; }

 private:
  enum class Answer : uint8_t { kDone, kWaiting, kEnded };
  // Steps `r` until it waits or ends (or waits for its turn to probe).
  // Whether it moved.
  bool advance_one(VfRequest& r);
  // The probe under way, and when it has answered, the first request waiting for its turn.
  void start_probes();
  // The first request waiting for the node's naming turn, when the turn is free (and
  // the next when that naming ended at once).
  void start_namings();
  // The node's naming turn for `r`: false when another naming has it.
  bool take_naming_turn(VfRequest& r);
  Answer step(VfRequest& r, Clock::time_point now);
  Answer probe(VfRequest& r);
  Answer probing(VfRequest& r, Clock::time_point now);
  Answer reading_back(VfRequest& r, Clock::time_point now);
  // A probe that failed, or bound nothing: the VF's problem, and its request ended.
  Answer probe_failed(VfRequest& r, model::Problem problem);
  Answer netdev(VfRequest& r, Clock::time_point now);
  // How long udev's add is waited for while udev is silent.
  [[nodiscard]] Clock::duration announce_window() const;
  // Until when `r` waits for udev's add: moved on while udev announces others.
  Clock::time_point waiting_for_add_until(VfRequest& r, Clock::time_point now);
  Answer udev(VfRequest& r, Clock::time_point now);
  // Waiting on its naming's link requests (a helper makes each) and its naming turn.
  Answer name(VfRequest& r, Clock::time_point now);
  Answer validate(VfRequest& r);
  Answer reprobe(VfRequest& r);
  Answer resetting_guid(VfRequest& r, Clock::time_point now);
  Answer start_unbind(VfRequest& r);
  Answer unbinding(VfRequest& r, Clock::time_point now);
  // A reprobe that failed before its probe: the VF ends with `problem`, the turn goes on.
  Answer end_reprobe(VfRequest& r, model::Problem problem);
  // Its netdev's events no longer wake the requests (from its probe to the end of its
  // udev step they do).
  void stop_watching(VfRequest& r);
  // Steps the requests an event or a bound has come for (every one, once udev's events
  // were lost). Never waits.
  void step_pending();

  PfRun& run_;
  std::vector<VfRequest> requests_;
  // A VF's PCI address -> its request, sorted by address (a map's node for each of a
  // node's 2,032 VFs cost five times the memory).
  std::vector<std::pair<model::PciAddress, std::size_t>> by_pci_;
  [[nodiscard]] VfRequest* by_pci(const model::PciAddress& pci);
  std::optional<std::size_t> probing_;  // the request whose probe (or reprobe) is under way
  std::set<std::size_t> in_line_;       // those waiting for their turn to probe
  std::set<std::size_t> naming_line_;   // those waiting for the node's naming turn
  // The requests not ended, in the order added: what each turn looks at (a walk of every
  // request at each of a PF's turns cost as much as the requests' own steps).
  std::vector<std::size_t> live_;
  void prune();  // drops the ended from live_
  // The requests stopped at a step that waits on a call's answer (or their naming's):
  // what each turn looks at and waits on. Those that moved on since leave it at the
  // next look.
  std::vector<std::size_t> waiting_;
  // Those that wait on udev (kNetdev, kUdev): woken by its events (take_woken), else
  // looked at only once the first of their bounds has come (`udev_due_`). Looking at
  // each of them at every turn, while udev was a second behind at 16 PFs of 127 VFs
  // with 5 ms probes, was a tenth of vfreadyd's instructions.
  std::vector<std::size_t> on_udev_;
  Clock::time_point udev_due_ = Clock::time_point::max();
  static bool waits(const VfRequest& r);
  static bool waits_on_udev(const VfRequest& r);
  // When `r`, waiting on udev, is next due for a look without an event.
  [[nodiscard]] static Clock::time_point udev_due(const VfRequest& r);
  void list_waiting(VfRequest& r);
  // Looks at the requests that wait on udev (all: `all`; else those whose bound came).
  void step_on_udev(bool all, Clock::time_point now);
  std::size_t unfinished_ = 0;            // requests added and not ended
  int udev_fd_ = -1;                      // udev's events, for these requests
  Wait wait_;                             // waiting_on()'s
  std::vector<model::PciAddress> woken_;  // the VFs udev's events named (step_pending)
};

// What goes on beside step "guids": the VFs' requests (pf_bringup.cpp). Each VF whose
// GUID is set is handed on, each call of the step is waited for beside what the requests
// wait on (a probe's answer is taken as it comes, not after the GUIDs' next write), and
// no GUID is written while enough VFs wait for their probe: the writes go beside the
// probes rather than all of them at once, ahead of the first probes, at the start.
class GuidFeed {
 public:
  virtual ~GuidFeed() = default;
  // The VF at run.vfs[at], its GUID set (or failed): to its probe.
  virtual void to_probe(std::size_t at) = 0;
  // Whether enough VFs wait for their probe that the next GUIDs may wait.
  [[nodiscard]] virtual bool enough_wait_for_probes() const = 0;
  // What the requests wait on now, and their next steps once it came (VfRequests').
  [[nodiscard]] virtual const Wait& waiting_on() = 0;
  virtual void resume() = 0;
};
// The VFs' requests as step "guids" feeds them: a GUID is written while fewer than two
// of its writes' worth of VFs (four VFs to a write of OFED's files) wait for their
// probe. More ahead only make the first probes wait on the writes: at 16 PFs of 127 VFs
// every GUID was written in the first half second, and those probes took up to twice
// their time.
class VfRequestFeed final : public GuidFeed {
 public:
  static constexpr std::size_t kAhead = 8;
  explicit VfRequestFeed(VfRequests& requests) : requests_(requests) {}
  void to_probe(std::size_t at) override { requests_.add(at); }
  [[nodiscard]] bool enough_wait_for_probes() const override {
    return requests_.probes_in_line() >= kAhead;
  }
  [[nodiscard]] const Wait& waiting_on() override { return requests_.waiting_on(); }
  void resume() override { requests_.resume(); }

 private:
  VfRequests& requests_;
};

}  // namespace vfready::pipeline
