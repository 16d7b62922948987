// SPDX-License-Identifier: Apache-2.0
#include "vfready/pipeline/pf_bringup.hpp"

#include <algorithm>
#include <memory>
#include <set>
#include <thread>

#include "vfready/host/host_reader.hpp"
#include "vfready/pipeline/hand_off.hpp"

namespace vfready::pipeline {

namespace {

using Clock = std::chrono::steady_clock;

// Step "udev" for one VF: its netdev exists and udev is done with it.
void settle_vf(const std::string& dir, Clock::time_point deadline, std::chrono::milliseconds bound,
               PfHost& os, model::VfStatus& vs) {
  if (!vs.in_use.empty()) {
    return;
  }
  // The netdev's name from sysfs, its ifindex from netlink. Should it be renamed in
  // between (udev, someone), sysfs is asked again.
  auto vf = host::read_vf_binding(os.sysfs, dir, vs.index);
  std::optional<host::Link> link;
  for (int tries = 0; tries < 3 && vf.netdev && !(link = os.links.by_name(*vf.netdev)); ++tries) {
    vf = host::read_vf_binding(os.sysfs, dir, vs.index);
  }
  if (!vf.netdev && vf.driver) {
    // Bound (the probe made its netdev), but the netdev is not here: a pod has it.
    vs.in_use = "its netdev is in another network namespace";
    return;
  }
  if (!vf.netdev || !link) {
    if (vs.problems.empty()) {
      vs.problems.push_back(
          "VF " + vs.pci + " has no netdev" +
          (vf.driver || vf.netdev ? std::string() : ": it is not bound (its probe failed?)") +
          "; see the kernel log");
    }
    return;
  }
  vs.ifindex = link->ifindex;
  vs.name = link->name;
  if (!os.udev.wait_initialized(vs.ifindex, deadline)) {
    vs.problems.push_back("udev did not finish with " + vs.name + " (ifindex " +
                          std::to_string(vs.ifindex) + ") within " + std::to_string(bound.count()) +
                          " ms");
  }
}

struct ToProbe {
  std::size_t at;  // index in status.vfs
  model::PciAddress pci;
};

struct Probed {
  std::size_t at;
  model::PciAddress pci;
  std::optional<std::string> error;
};

// Step "validate": read everything back; what is not as configured is a problem.
// The port's state, re-read until ACTIVE or `bound` passes. sysfs offers no event for
// IB port state changes (the subnet manager moves it INIT -> ARMED -> ACTIVE), so this
// is a bounded re-check on the PF's worker thread, never on the event loop.
std::string wait_port_active(PfHost& os, const model::PfInfo& info,
                             std::chrono::milliseconds bound) {
  std::string state = info.ports.empty() ? "" : info.ports.front().state;
  if (!info.ib_device || state.find("ACTIVE") != std::string::npos) {
    return state;
  }
  const auto file =
      "bus/pci/devices/" + info.pci.str() + "/infiniband/" + *info.ib_device + "/ports/1/state";
  const auto deadline = Clock::now() + bound;
  while (Clock::now() < deadline) {
    std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(std::chrono::milliseconds(250),
                                                                   deadline - Clock::now()));
    state = os.sysfs.read(file).value_or(state);
    if (state.find("ACTIVE") != std::string::npos) {
      break;
    }
  }
  return state;
}

// One VF read back: the GUID its port uses (with OFED's sriov/, the only way to tell),
// and its netdev's name and altnames. False when the GUID in use is not the VF's.
bool validate_vf(const model::PfTarget& target, bool ofed, const std::string& dir, PfHost& os,
                 model::VfStatus& vs) {
  const auto& vt = target.vf.at(vs.index);
  const auto effective = host::read_vf_port_guid(os.sysfs, dir, vs.index);
  vs.guid = effective ? effective->str() : "";
  const bool guid_right = !ofed || effective == vt.guid;
  if (!guid_right && vs.problems.empty()) {
    vs.problems.push_back("VF " + vs.pci + " uses GUID " + vs.guid + ", not " + vt.guid.str());
  }
  if (vs.ifindex == 0) {
    return guid_right;
  }
  const auto link = os.links.get(vs.ifindex);
  if (!link) {
    vs.problems.push_back("netdev " + vs.name + " is gone");
    return guid_right;
  }
  vs.name = link->name;
  vs.altnames = link->altnames;
  if (vt.name && link->name != vt.name->str() && vs.problems.empty()) {
    vs.problems.push_back("VF " + vs.pci + " is named " + link->name + ", not " + vt.name->str());
  }
  for (const auto& alt : vt.altnames) {
    if (std::find(link->altnames.begin(), link->altnames.end(), alt.str()) ==
            link->altnames.end() &&
        vs.problems.empty()) {
      vs.problems.push_back("VF " + vs.pci + " lacks altname " + alt.str());
    }
  }
  return guid_right;
}

// The PF read back, and its VFs but those in `done` (read back as they were finished).
// The VFs (indexes in status.vfs) that do not use their GUID.
std::vector<std::size_t> validate(const model::PfTarget& target, const model::Config& config,
                                  PfHost& os, model::PfStatus& status,
                                  const std::set<std::size_t>& done) {
  std::vector<std::size_t> wrong_guid;
  const auto info = host::read_pf(os.sysfs, target.pci, /*with_vfs=*/false);
  if (!info) {
    status.problems.push_back("PF " + target.pci.str() + " vanished");
    return wrong_guid;
  }
  const auto dir = "bus/pci/devices/" + target.pci.str() + "/";
  // The PF's name as netlink has it, as for its VFs: its own rename has just happened,
  // and netlink is where it happened.
  const auto link = status.ifindex != 0 ? os.links.get(status.ifindex) : std::nullopt;
  status.name = link ? link->name : info->netdev.value_or("");
  status.link_layer = info->link_layer();
  status.port_state = info->ports.empty() ? "" : info->ports.front().state;
  if (target.require_port_active) {
    const auto bound = std::chrono::milliseconds(config.timeouts.port_active_ms);
    status.port_state = wait_port_active(os, *info, bound);
    if (status.port_state.find("ACTIVE") == std::string::npos) {
      status.problems.push_back("port 1 of PF " + target.pci.str() + " is \"" + status.port_state +
                                "\", not ACTIVE after " + std::to_string(bound.count()) +
                                " ms: check the cable and the subnet manager");
    }
  }
  for (std::size_t i = 0; i < status.vfs.size(); ++i) {
    if (!done.contains(i) && !validate_vf(target, info->ofed_sriov, dir, os, status.vfs[i])) {
      wrong_guid.push_back(i);
    }
  }
  return wrong_guid;
}

}  // namespace

model::PfStatus bring_up_pf(const model::PfTarget& target, const model::Config& config,
                            const model::CompatTable& table, const model::HostInfo& host,
                            PfHost& os, NameRegistry& names, const ProgressFn& progress) {
  model::PfStatus status;
  status.pci = target.pci.str();
  const auto start = Clock::now();
  const auto step = [&](const char* name) {
    status.step = name;
    progress(name);
  };
  const auto finish = [&] {
    const bool vfs_ok = std::all_of(status.vfs.begin(), status.vfs.end(),
                                    [](const model::VfStatus& v) { return v.problems.empty(); });
    status.state =
        status.problems.empty() && vfs_ok ? model::PfState::kReady : model::PfState::kFailed;
    status.elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    return status;
  };

  step(StepNames::kHardware);
  status.problems = target.problems;
  const auto found = std::find_if(host.functions.begin(), host.functions.end(),
                                  [&](const model::PfInfo& f) { return f.pci == target.pci; });
  const model::PfInfo* seen = found == host.functions.end() ? nullptr : &*found;
  if (target.problems.empty()) {
    auto verdict = model::check_hardware(target, seen, config, table, host);
    status.problems.insert(status.problems.end(), verdict.failures.begin(), verdict.failures.end());
    status.warnings = verdict.warnings;
    status.events = verdict.events;
  }
  if (seen != nullptr) {
    status.name = seen->netdev.value_or("");
    status.ifindex = seen->ifindex;
    status.link_layer = seen->link_layer();
  }
  if (!status.problems.empty()) {
    return finish();
  }

  // The host was read as this pass began: the PF and its VFs as they are now, unless
  // the count changes.
  step(StepNames::kVfs);
  if (seen == nullptr) {
    status.problems.push_back("PF " + target.pci.str() + " vanished");
    return finish();
  }
  std::optional<model::PfInfo> info = *seen;
  bool autoprobe_changed = false;
  if (!detail::ensure_vf_count(target, *info, os.sysfs, status, &autoprobe_changed)) {
    return finish();
  }

  step(StepNames::kGuids);
  const auto dir = "bus/pci/devices/" + target.pci.str() + "/";
  if (status.sriov_writes > 0) {
    // VFs this pass has just made: unbound (autoprobe is off), without netdevs or GUIDs.
    // Only where each one is needs reading, and whether OFED's sriov/ came with them.
    info->numvfs = target.vfs;
    info->ofed_sriov = os.sysfs.exists(dir + "sriov/0/port");
    info->vfs.clear();
    // The plan placed them by the PF's First VF Offset and VF Stride: when the first and
    // the last virtfn link agree (two points fix both), the rest need no reading.
    const auto placed = [&](uint16_t i) { return host::read_vf_address(os.sysfs, dir, i); };
    const bool as_planned = target.vfs > 1 && target.vf.size() == target.vfs &&
                            placed(0) == target.vf.front().pci &&
                            placed(target.vfs - 1) == target.vf.back().pci;
    for (uint16_t i = 0; i < target.vfs; ++i) {
      model::VfInfo vf;
      vf.index = i;
      if (const auto pci = as_planned ? target.vf[i].pci : placed(i)) {
        vf.pci = *pci;
      } else {
        status.problems.push_back("VF " + std::to_string(i) + " of PF " + target.pci.str() +
                                  " is missing after writing sriov_numvfs");
        return finish();
      }
      info->vfs.push_back(vf);
    }
  }
  const auto udev_bound = std::chrono::milliseconds(config.timeouts.udev_ms);
  std::set<std::size_t> done;  // VFs through udev, naming and validation already
  // A VF after its probe: its netdev and udev, its name, its read-back.
  const auto finish_vf = [&](model::VfStatus& vs) {
    settle_vf(dir, Clock::now() + udev_bound, udev_bound, os, vs);
    detail::name_vf(target, os, names, vs, status.events);
    return validate_vf(target, info->ofed_sriov, dir, os, vs);
  };
  // A VF that is ours (its netdev is here) but does not use its GUID came up before its
  // GUID was set: someone else bound it between this pass's look and its own probe (a
  // VF re-created while drift is repaired), or it was mid-probe when the pass looked and
  // seemed a pod's. Once more: GUID, unbind, probe, and through the rest again.
  const auto reprobe = [&](model::VfStatus& vs, const model::PciAddress& pci) {
    for (const auto& problem : vs.problems) {
      status.events.erase(problem);
    }
    vs.problems.clear();
    if (auto error = detail::reprobe_with_guid(target, os, vs.index, pci)) {
      vs.problems.push_back(*error);
      return;
    }
    finish_vf(vs);
  };
  {
    // A PF's probes are its critical path: they run one after another on a thread of
    // their own, each as soon as its VF's GUID is set. Each VF whose probe has ended
    // goes through udev and naming on this thread meanwhile, so little is left to do
    // when the last probe ends.
    HandOff<ToProbe> to_probe;
    HandOff<Probed> probed;
    std::jthread prober([&] {
      while (auto next = to_probe.pop()) {
        probed.push({next->at, next->pci, detail::probe_vf(os.sysfs, next->pci)});
      }
      probed.close();
    });
    {
      // Closed however assign_guids ends, so that the prober (joined when it goes out of
      // scope) always ends too.
      const auto closer = std::unique_ptr<HandOff<ToProbe>, void (*)(HandOff<ToProbe>*)>(
          &to_probe, [](HandOff<ToProbe>* q) { q->close(); });
      detail::assign_guids(target, *info, os, status,
                           [&](std::size_t at, const model::PciAddress& pci) {
                             to_probe.push({at, pci});
                           });
    }
    while (auto p = probed.pop()) {
      auto& vs = status.vfs[p->at];
      if (p->error) {
        vs.problems.push_back(*p->error);
        continue;
      }
      if (!finish_vf(vs) && vs.in_use.empty() && vs.ifindex != 0) {
        reprobe(vs, p->pci);
      }
      done.insert(p->at);
    }
  }
  if (autoprobe_changed) {
    // Later VFs (a driver reload) probe by themselves again, as before.
    const auto err =
        os.sysfs.write("bus/pci/devices/" + target.pci.str() + "/sriov_drivers_autoprobe", "1");
    if (err != 0) {
      status.warnings.push_back("cannot turn sriov_drivers_autoprobe back on: " +
                                host::errno_name(err));
    }
  }

  // The VFs that were not probed in this pass (bound already, with the right GUID).
  step(StepNames::kUdev);
  const auto deadline = Clock::now() + udev_bound;
  for (std::size_t i = 0; i < status.vfs.size(); ++i) {
    if (!done.contains(i)) {
      settle_vf(dir, deadline, udev_bound, os, status.vfs[i]);
    }
  }

  step(StepNames::kNames);
  detail::name_pf(target, os, names, status);
  for (std::size_t i = 0; i < status.vfs.size(); ++i) {
    if (!done.contains(i)) {
      detail::name_vf(target, os, names, status.vfs[i], status.events);
    }
  }

  step(StepNames::kValidate);
  for (const std::size_t i : validate(target, config, os, status, done)) {
    auto& vs = status.vfs[i];
    const auto pci = model::PciAddress::parse(vs.pci);
    if (vs.in_use.empty() && vs.ifindex != 0 && pci) {
      reprobe(vs, pci.value());
    }
  }
  return finish();
}

}  // namespace vfready::pipeline
