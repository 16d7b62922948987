// SPDX-License-Identifier: Apache-2.0
#include "vfready/pipeline/pf_bringup.hpp"

#include <algorithm>
#include <memory>
#include <set>
#include <thread>

#include "vfready/pipeline/hand_off.hpp"
#include "vfready/pipeline/steps.hpp"

namespace vfready::pipeline {

namespace {

using Clock = std::chrono::steady_clock;

void add(std::vector<model::Problem>& to, const StepResult& result) {
  to.insert(to.end(), result.problems.begin(), result.problems.end());
}

// Step "udev" for one VF, waiting as it asks until `deadline`.
void settle(PfRun& run, model::VfStatus& vs, host::UdevWait::Netdev netdev,
            Clock::time_point deadline) {
  add(vs.problems, run_until(run.os, deadline, [&] { return settle_vf(run, vs, netdev); }));
}

// A VF after its probe: its netdev and udev, its name, its read-back. False when its
// port does not use its GUID. `probed`: the GUID read back at the probe (nullptr: read
// it now).
bool finish_vf(PfRun& run, model::VfStatus& vs,
               const std::optional<model::Guid>* probed = nullptr) {
  const auto now = Clock::now();
  const auto deadline = now + std::chrono::milliseconds(run.config.timeouts.udev_ms);
  bool announced = false;
  if (vs.ifindex == 0 && !vs.in_use) {
    // udev's add names the netdev the probe made (ifindex and name) and says udev is done
    // with it: nothing to look up in sysfs or netlink. One not announced within a second
    // (events lost, no udevd, the netdev moved away) is looked for as before.
    constexpr auto kAnnounced = std::chrono::seconds(1);
    if (auto added = run.os.udev.wait_added(vs.pci.str(), std::min(deadline, now + kAnnounced))) {
      vs.ifindex = added->ifindex;
      vs.name = std::move(added->name);
      announced = true;
    }
  }
  settle(run, vs, host::UdevWait::Netdev::kNew, deadline);
  name_vf(run, vs, announced);
  if (announced && vs.ifindex != 0 && !run.named.contains(vs.ifindex)) {
    // The netdev udev announced is gone by now: udev was behind and it was an older
    // one of the VF's, or it has moved to another namespace. sysfs says what the VF has.
    std::erase_if(vs.problems,
                  [](const model::Problem& p) { return p.kind == model::EventKind::kNetdevGone; });
    vs.ifindex = 0;
    vs.name.clear();
    settle(run, vs, host::UdevWait::Netdev::kNew, deadline);
    name_vf(run, vs);
  }
  return validate_vf(run, vs, probed);
}

// A VF that is ours (its netdev is here) but does not use its GUID came up before its
// GUID was set: someone else bound it between this pass's look and its own probe (a VF
// re-created while drift is repaired), or it was mid-probe when the pass looked and
// seemed a pod's. Once more: GUID, unbind, probe, and through the rest again.
void reprobe(PfRun& run, model::VfStatus& vs) {
  vs.problems.clear();
  const auto probe = reprobe_with_guid(run, vs.index, vs.pci, vs.ifindex);
  if (probe.error) {
    vs.problems.push_back(*probe.error);
    return;
  }
  vs.ifindex = 0;  // the probe made a new netdev
  vs.name.clear();
  finish_vf(run, vs, &probe.guid);  // the GUID read back with the probe
}

// Step "guids" with the probes beside it: the probes run one after another on a thread
// of their own, each as soon as its VF's GUID is set, and each VF whose probe has ended
// goes through udev, naming and its read-back on this thread meanwhile, so little is
// left to do when the last probe ends. The VFs (indexes in status.vfs) so finished.
std::set<std::size_t> set_guids_and_probe(PfRun& run) {
  struct ToProbe {
    std::size_t at;  // index in status.vfs
    uint16_t index;
    model::PciAddress pci;
  };
  struct Probed {
    std::size_t at;
    Probe probe;
  };
  std::set<std::size_t> done;
  HandOff<ToProbe> to_probe;
  HandOff<Probed> probed;
  std::jthread prober([&] {
    while (auto next = to_probe.pop()) {
      probed.push({next->at, probe_vf(run, next->index, next->pci)});
    }
    probed.close();
  });
  {
    // Closed however assign_guids ends, so that the prober (joined when it goes out of
    // scope) always ends too.
    const auto closer = std::unique_ptr<HandOff<ToProbe>, void (*)(HandOff<ToProbe>*)>(
        &to_probe, [](HandOff<ToProbe>* q) { q->close(); });
    assign_guids(run, [&](std::size_t at, uint16_t index, const model::PciAddress& pci) {
      to_probe.push({at, index, pci});
    });
  }
  while (auto p = probed.pop()) {
    auto& vs = run.status.vfs[p->at];
    if (p->probe.error) {
      vs.problems.push_back(*p->probe.error);
      continue;  // read back with the rest, its netdev looked for again
    }
    done.insert(p->at);
    if (!finish_vf(run, vs, &p->probe.guid) && !vs.in_use && vs.ifindex != 0) {
      reprobe(run, vs);
    }
  }
  return done;
}

// A PF that failed before its VFs were looked at still shows the VFs it has: their
// addresses, netdevs and GUIDs as found, and who uses them; unchecked otherwise.
// What the pass read of a VF as it began, shown for one it did not judge.
void show_as_found(model::VfStatus& vs, const model::VfInfo& vf) {
  vs.name = vf.netdev.value_or("");
  vs.ifindex = vf.ifindex;
  vs.guid = vf.effective_guid;
  vs.checked = false;
}

void list_found_vfs(PfRun& run) {
  if (!run.status.vfs.empty()) {
    return;
  }
  for (const auto& vf : run.info.vfs) {
    model::VfStatus vs;
    vs.index = vf.index;
    vs.pci = vf.pci;
    show_as_found(vs, vf);
    vs.in_use = in_use(vf);
    run.status.vfs.push_back(std::move(vs));
  }
}

model::PfStatus finish(PfRun& run, Clock::time_point start) {
  auto& status = run.status;
  if (!status.problems.empty()) {
    list_found_vfs(run);
  }
  const bool vfs_ok = std::all_of(status.vfs.begin(), status.vfs.end(),
                                  [](const model::VfStatus& v) { return v.problems.empty(); });
  status.state =
      status.problems.empty() && vfs_ok ? model::PfState::kReady : model::PfState::kFailed;
  settle_stuck(run);
  status.elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return std::move(status);
}

}  // namespace

model::PfStatus bring_up_pf(const model::PfTarget& target, const model::Config& config,
                            const model::CompatTable& table, const model::HostInfo& host,
                            PfHost& os, NameRegistry& names, const ProgressFn& progress) {
  const auto start = Clock::now();
  PfRun run{target, config, os, names};
  run.kernel_release = host.kernel_release;
  run.status.pci = target.pci;
  const auto step = [&](const char* name) {
    run.status.step = name;
    progress(name);
  };
  // A failed PF step ends the pass, and so does a stuck PF (every call would answer
  // kStuck): the steps after it would only wait for what cannot come.
  const auto failed = [&](const StepResult& result) {
    add(run.status.problems, result);
    return result.is_failed() || os.calls.stuck(target.pci).has_value();
  };

  step(StepNames::kHardware);
  const bool checked = !failed(check_hardware(run, table, host));
  // Made after the check has read the PF: autoprobe found off (a predecessor died
  // mid-pass) is turned on however this pass ends, even when the check failed.
  AutoprobeGuard autoprobe(os.calls, target.pci, run.info.autoprobe);
  // Found off with the PF read: a pass that died, or another tool, left it so.
  run.status.changes.autoprobe_restored = !run.info.autoprobe && run.info.sriov;
  if (!checked) {
    return finish(run, start);
  }

  step(StepNames::kVfs);
  if (failed(ensure_vf_count(run, autoprobe))) {
    return finish(run, start);  // autoprobe is restored as the guard goes
  }
  // On again before the first probe: the PCI core probes a VF only while its PF's
  // autoprobe is on (pci_device_can_probe()), and a drivers_probe write it refuses
  // still succeeds. Turning it on probes none of the VFs that exist, so each stays
  // unbound until its GUID is set and its own probe comes.
  if (auto refused = autoprobe.restore()) {
    failed(StepResult::failed(*refused));
    return finish(run, start);
  }
  if (os.calls.stuck(target.pci)) {
    return finish(run, start);
  }

  step(StepNames::kGuids);
  const auto done = set_guids_and_probe(run);
  auto& vfs = run.status.vfs;
  const auto not_done = [&](const auto& f) {
    for (std::size_t i = 0; i < vfs.size(); ++i) {
      if (!done.contains(i)) {
        f(vfs[i]);
      }
    }
  };
  // A pass that ends before the VFs not finished beside the probes are validated: they
  // are listed as found (what sysfs showed of them as the pass began), not called ready.
  const auto end_early = [&] {
    not_done([&](model::VfStatus& vs) {
      if (vs.name.empty() && vs.index < run.info.vfs.size()) {
        show_as_found(vs, run.info.vfs[vs.index]);
      }
      vs.checked = false;
    });
    return finish(run, start);
  };
  if (os.calls.stuck(target.pci)) {
    return end_early();
  }

  // The VFs that were not probed in this pass (bound already, with the right GUID).
  step(StepNames::kUdev);
  const auto deadline = Clock::now() + std::chrono::milliseconds(config.timeouts.udev_ms);
  not_done(
      [&](model::VfStatus& vs) { settle(run, vs, host::UdevWait::Netdev::kExisting, deadline); });

  if (os.calls.stuck(target.pci)) {
    return end_early();
  }
  step(StepNames::kNames);
  name_pf(run);
  not_done([&](model::VfStatus& vs) { name_vf(run, vs); });

  step(StepNames::kValidate);
  if (failed(validate_pf(run))) {
    return end_early();
  }
  const auto port_bound = Clock::now() + std::chrono::milliseconds(config.timeouts.port_active_ms);
  failed(run_until(os, port_bound, [&] { return check_port_active(run); }));
  // The port's wait may have lasted: these VFs' netdevs are asked again, not taken from
  // naming's answers (which stand only for a VF validated right after it is named).
  run.named.clear();
  not_done([&](model::VfStatus& vs) {
    if (!validate_vf(run, vs) && !vs.in_use && vs.ifindex != 0) {
      reprobe(run, vs);
    }
  });
  return finish(run, start);
}

}  // namespace vfready::pipeline
