// SPDX-License-Identifier: Apache-2.0
#include "vfready/pipeline/pf_bringup.hpp"

#include <unistd.h>

#include <algorithm>
#include <set>

#include "vfready/model/kernel_features.hpp"
#include "vfready/pipeline/steps.hpp"
#include "vfready/pipeline/task.hpp"
#include "vfready/pipeline/vf_requests.hpp"

namespace vfready::pipeline {

namespace {

using Clock = host::Clock;

void add(std::vector<model::Problem>& to, const StepResult& result) {
  to.insert(to.end(), result.problems.begin(), result.problems.end());
}

// Step "udev" for one VF, waiting as it asks until `deadline`.
Task<Done> settle(PfRun& run, VfWork& vs, Clock::time_point deadline, int udev_fd) {
  auto until = run_until(
      run.os, deadline, [&] { return settle_vf(run, vs, host::UdevWait::Netdev::kExisting); },
      UdevWatch{udev_fd, vs.pci});
  const auto settled = co_await until;
  add(vs.problems, settled);
  co_return Done{};
}

// A PF's VFs' requests, run to their end; the VFs finished (indexes in run.vfs).
Task<std::set<std::size_t>> run_requests(VfRequests& requests) {
  while (!requests.ended()) {
    co_await requests.waiting_on();
    requests.resume();
  }
  co_return requests.finished();
}

// Step "guids" with the probes beside it: each VF's request starts as soon as its GUID is
// set (its probe, then udev, naming and its read-back beside the next VF's probe), so
// little is left to do when the last probe ends. The VFs (indexes in run.vfs) so
// finished.
Task<std::set<std::size_t>> set_guids_and_probe(PfRun& run) {
  VfRequests requests(run, run.target.vf.size() + 1);  // and the PF's naming
  requests.add_pf_naming();  // in line with the VFs' namings, beside the probes
  VfRequestFeed feed(requests);
  auto assigned = assign_guids(run, feed);
  co_await assigned;
  auto requested = run_requests(requests);
  auto finished = co_await requested;
  co_return finished;
}

// A PF that failed before its VFs were looked at still shows the VFs it has: their
// addresses, netdevs and GUIDs as found, and who uses them; unchecked otherwise.
// What the pass read of a VF as it began, shown for one it did not judge.
void show_as_found(VfWork& vs, const model::VfInfo& vf) {
  vs.name = vf.netdev.value_or("");
  vs.ifindex = vf.ifindex;
  vs.guid = vf.effective_guid;
  vs.mac = vf.mac;
  vs.checked = false;
}

void list_found_vfs(PfRun& run) {
  if (!run.vfs.empty()) {
    return;
  }
  for (const auto& vf : run.info.vfs) {
    VfWork vs;
    vs.index = vf.index;
    vs.pci = vf.pci;
    show_as_found(vs, vf);
    vs.in_use = in_use(vf, run.info.vfs_driver());
    run.vfs.push_back(std::move(vs));
  }
}

// What the pass gave each netdev it judged right, besides its name: its planned altnames
// (a VF's: those of its row, read back) and MTU. Only a link judged right has them: validation read
// both back (an IPoIB netdev's MTU is at most its broadcast group's, whatever it is given: a VF
// left lower is not ready, and its MTU is not one to hold link events against, or each repair would
// make another).
void give_links(PfRun& run) {
  auto& status = run.status;
  if (status.problems.empty() && status.ifindex != 0) {
    for (const auto& alt : run.target.altnames) {
      status.given.altnames.push_back(alt.str());
    }
    status.given.mtu = run.target.mtu;
  }
  for (auto& vf : status.vfs) {
    if (vf.problems.empty() && vf.checked && !vf.in_use && vf.ifindex != 0 &&
        vf.index < run.target.vf.size()) {
      vf.given = true;
      vf.given_mtu = run.target.vf[vf.index].mtu;
    }
  }
}

// A pass that failed may have met its PF losing its driver (unbound, its module
// removed): its VFs go with it (a PF driver's remove disables SR-IOV), and what failed
// is only that. The report says so, and lists the VFs still there as found, unjudged.
bool when_driver_gone(PfRun& run) {
  const bool failed = !run.status.problems.empty() ||
                      std::any_of(run.vfs.begin(), run.vfs.end(),
                                  [](const auto& v) { return !v.problems.empty(); });
  // Lost: bound as the pass read it, there and unbound now (a PF gone is said as such).
  const bool gone = std::any_of(
      run.status.problems.begin(), run.status.problems.end(), [](const model::Problem& p) {
        return p.kind == model::EventKind::kPfVanished || p.kind == model::EventKind::kPfMissing;
      });
  if (!failed || gone || !run.info.driver || run.os.calls.stuck(run.target.pci) ||
      !run.os.reads.driverless(run.target.pci)) {
    return false;
  }
  const auto pci = run.target.pci.str();
  const auto& driver = *run.info.driver;
  run.status.problems = {model::problem(
      model::EventKind::kPfNoDriver,
      "PF " + pci + " lost its driver (" + driver +
          ") during the pass: it was unbound or its module removed, and its VFs went with "
          "it; bind it again (echo " +
          pci + " > /sys/bus/pci/drivers/" + driver +
          "/bind) and vfready brings it up as its netdev comes back (one without a netdev: "
          "vfreadyctl reconcile)",
      pci)};
  list_found_vfs(run);  // those of a pass that failed before it got to its VFs
  std::erase_if(run.vfs, [&](const VfWork& vs) {
    return !run.os.reads.vf_address(run.target.pci, vs.index).has_value();
  });
  for (auto& vs : run.vfs) {
    vs.problems.clear();
    vs.checked = false;
  }
  return true;
}

model::PfStatus finish(PfRun& run, Clock::time_point start) {
  auto& status = run.status;
  if (!when_driver_gone(run) && !status.problems.empty()) {
    list_found_vfs(run);
  }
  status.vfs.clear();
  status.vfs.reserve(run.vfs.size());
  for (auto& vf : run.vfs) {
    status.vfs.push_back(report(std::move(vf)));
  }
  run.vfs.clear();
  const bool vfs_ok = std::all_of(status.vfs.begin(), status.vfs.end(),
                                  [](const model::VfStatus& v) { return v.problems.empty(); });
  status.state =
      status.problems.empty() && vfs_ok ? model::PfState::kReady : model::PfState::kFailed;
  give_links(run);
  settle_stuck(run);
  status.elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return std::move(status);
}

// One PF's pass, step by step.
class PfPass {
 public:
  PfPass(PfRun& run, const ProgressFn& progress) : run_(run), progress_(progress) {
    try {
      udev_fd_ = run.os.udev.subscribe();
    } catch (const std::system_error&) {
      udev_fd_ = -1;  // no descriptor to spare: udev's waits look again at their bounds
    }
  }
  ~PfPass() {
    if (udev_fd_ >= 0) {
      run_.os.udev.unsubscribe(udev_fd_);
    }
  }
  PfPass(const PfPass&) = delete;
  PfPass& operator=(const PfPass&) = delete;

  void step(const char* name) {
    run_.status.step = name;
    progress_(name);
  }
  // A failed PF step ends the pass, and so does a stuck PF (every call would answer
  // kStuck): the steps after it would only wait for what cannot come.
  bool failed(const StepResult& result) {
    add(run_.status.problems, result);
    return result.is_failed() || stuck();
  }
  bool stuck() { return run_.os.calls.stuck(run_.target.pci).has_value(); }

  // Steps "vfs" and autoprobe on again: false when the pass ends there.
  Task<bool> make_vfs(AutoprobeGuard& autoprobe) {
    step(StepNames::kVfs);
    auto up = pf_up(run_);
    co_await up;
    auto counted = ensure_vf_count(run_, autoprobe);
    const auto made = co_await counted;
    if (failed(made)) {
      co_return false;  // autoprobe is restored before the pass ends
    }
    auto loaded = vf_driver_loaded(run_);
    co_await loaded;
    // On again before the first probe: the PCI core probes a VF only while its PF's
    // autoprobe is on (pci_device_can_probe()), and a drivers_probe write it refuses
    // still succeeds. Turning it on probes none of the VFs that exist, so each stays
    // unbound until its GUID is set and its own probe comes.
    if (auto refused = autoprobe.restore()) {
      failed(StepResult::failed(*refused));
      co_return false;
    }
    co_return !stuck();
  }

  // The VFs not finished beside the probes (bound already with the right GUID, or whose
  // probe failed): udev, names, and with the PF's own checks, their read-back. False
  // when the pass ends before they are judged.
  Task<bool> judge_the_rest(const std::set<std::size_t>& done) {
    auto& vfs = run_.vfs;
    step(StepNames::kUdev);
    const auto deadline = Clock::now() + std::chrono::milliseconds(run_.config.timeouts.udev_ms);
    for (std::size_t i = 0; i < vfs.size(); ++i) {
      if (!done.contains(i)) {
        auto settled = settle(run_, vfs[i], deadline, udev_fd_);
        co_await settled;
      }
    }
    if (stuck()) {
      co_return false;
    }
    step(StepNames::kNames);
    {
      NamingTurn held(run_.names);  // the PF's and these VFs' names, in one turn
      auto turn = await_naming_turn(held, run_.names.turn_fd());
      co_await turn;
      if (!run_.pf_named) {  // set_guids_and_probe() names it: this is its fallback
        auto pf_named = name_pf(run_);
        co_await pf_named;
      }
      for (std::size_t i = 0; i < vfs.size(); ++i) {
        if (!done.contains(i)) {
          auto named = name_vf(run_, i);
          co_await named;
        }
      }
    }
    step(StepNames::kValidate);
    auto pf_valid = validate_pf(run_);
    if (failed(co_await pf_valid)) {
      co_return false;
    }
    auto port = await_port_active(
        run_, Clock::now() + std::chrono::milliseconds(run_.config.timeouts.port_active_ms));
    failed(co_await port);
    auto judged = validate_the_rest(done);
    if (!co_await judged) {
      co_return false;
    }
    auto ports = check_vf_ports(run_);
    if (!failed(co_await ports)) {
      auto rdma = check_vf_rdma(run_);
      failed(co_await rdma);
    }
    co_return true;
  }

  // The VFs not finished beside the probes, read back and judged once the PF is: those
  // whose GUID is wrong reprobed. False when the pass ends before they are judged.
  Task<bool> validate_the_rest(const std::set<std::size_t>& done) {
    // The port's wait may have lasted: these VFs' netdevs are asked again, not taken
    // from naming's answers (which stand only for a VF validated right after it is named).
    std::vector<uint16_t> indices;
    std::vector<int> ifindices;
    for_not_done(done, [&](VfWork& vs) {
      indices.push_back(vs.index);
      if (vs.ifindex != 0) {
        ifindices.push_back(vs.ifindex);
      }
    });
    auto links = links_read_back(run_, std::move(ifindices));
    co_await links;
    auto reading = read_back_guids(run_, indices);
    const auto guids = co_await reading;
    if (stuck()) {
      co_return false;  // a read that did not answer: nothing of these VFs is judged
    }
    auto& vfs = run_.vfs;
    VfRequests again(run_);
    for (std::size_t i = 0, k = 0; i < vfs.size(); ++i) {
      auto& vs = vfs[i];
      if (!done.contains(i) && !validate_vf(run_, vs, guids.at(k++)) && !vs.in_use &&
          vs.ifindex != 0) {
        again.add(i, VfRequest::Step::kReprobe);
      }
    }
    auto reprobed = run_requests(again);
    co_await reprobed;
    co_return true;
  }

  // A pass that ends before the VFs not finished beside the probes are validated: they
  // are listed as found (what sysfs showed of them as the pass began), not called ready.
  void show_the_rest_as_found(const std::set<std::size_t>& done) {
    for_not_done(done, [&](VfWork& vs) {
      if (vs.name.empty() && vs.index < run_.info.vfs.size()) {
        show_as_found(vs, run_.info.vfs[vs.index]);
      }
      vs.checked = false;
    });
  }

 private:
  template <class F>
  void for_not_done(const std::set<std::size_t>& done, const F& f) {
    auto& vfs = run_.vfs;
    for (std::size_t i = 0; i < vfs.size(); ++i) {
      if (!done.contains(i)) {
        f(vfs[i]);
      }
    }
  }

  PfRun& run_;
  const ProgressFn& progress_;
  int udev_fd_ = -1;  // wakes the waits of the VFs not finished beside the probes
};

}  // namespace

Task<model::PfStatus> pf_pass(const model::PfTarget& target, const model::Config& config,
                              const model::CompatTable& table, const model::HostInfo& host,
                              PfHost& os, NameRegistry& names, const ProgressFn& progress) {
  const auto start = Clock::now();
  PfRun run{target, config, os, names};
  run.kernel_release = host.kernel_release;
  run.renames_up = model::renames_up_links(run.kernel_release);
  run.status.pci = target.pci;
  PfPass pass(run, progress);

  pass.step(StepNames::kHardware);
  auto found = find_hardware(run, host);
  co_await found;
  const bool checked = !pass.failed(check_hardware(run, table, host));
  // Made after the check has read the PF: autoprobe found off (a predecessor died
  // mid-pass) is turned on however this pass ends, even when the check failed.
  AutoprobeGuard autoprobe(os.calls, target.pci, run.info.autoprobe, os.autoprobe_guards);
  // Found off with the PF read: a pass that died, or another tool, left it so.
  run.status.changes.autoprobe_restored = !run.info.autoprobe && run.info.sriov;
  bool made = false;
  if (checked) {
    auto making = pass.make_vfs(autoprobe);
    made = co_await making;
  }
  if (!made) {
    if (auto refused = autoprobe.restore()) {  // on again however the pass ends
      run.status.problems.push_back(std::move(*refused));
    }
    co_return finish(run, start);
  }
  pass.step(StepNames::kGuids);
  auto probed = set_guids_and_probe(run);
  const auto done = co_await probed;
  bool judged = false;
  if (!pass.stuck()) {
    auto rest = pass.judge_the_rest(done);
    judged = co_await rest;
  }
  if (!judged) {
    pass.show_the_rest_as_found(done);
  }
  co_return finish(run, start);
}

}  // namespace vfready::pipeline
