// SPDX-License-Identifier: Apache-2.0
// Step "validate" of an Ethernet PF: what its driver reports of each VF (the PF's
// IFLA_VFINFO_LIST) against what the pass set through the PF (steps.hpp).
#include <algorithm>
#include <cerrno>
#include <optional>
#include <string>
#include <vector>

#include "vfready/host/errno_name.hpp"
#include "vfready/pipeline/call_answer.hpp"
#include "vfready/pipeline/steps.hpp"

namespace vfready::pipeline {

namespace {

std::string on_off(bool on) { return on ? "on" : "off"; }

// The VFs this pass judged ready so far whose port the plan sets: those to check.
bool to_check(const PfRun& run, const VfWork& vs) {
  return vs.checked && !vs.in_use && vs.problems.empty() && vs.index < run.target.vf.size();
}

const host::VfPort* reported(const host::Link& pf, uint16_t index) {
  for (const auto& vf : pf.vfs) {
    if (vf.vf == index) {
      return &vf;
    }
  }
  return nullptr;
}

std::string pf_said(const PfRun& run) {
  return "PF " + run.target.pci.str() + " (" +
         (run.status.name.empty() ? run.info.netdev.value_or("?") : run.status.name) + ")";
}

// An Ethernet PF whose entry sets a MAC or a setting of its VFs, with a netdev to ask.
bool has_vf_ports(const PfRun& run) {
  bool planned = run.target.vf_port.any();
  for (const auto& vt : run.target.vf) {
    planned = planned || vt.mac.has_value();
  }
  return planned && guid_path(run.info) == GuidPath::kEthernet && run.info.ifindex != 0;
}

std::optional<model::Problem> lookup_problem(PfRun& run, const host::LinkAnswer& got) {
  if (got.err == host::kStuck) {
    return stuck_problem(run);  // a lookup on rtnl_lock
  }
  if (got.err != 0 || !got.link) {
    return model::problem(model::EventKind::kHostReadFailed,
                          "the netlink lookup of the VFs of " + pf_said(run) +
                              " failed: " + host::errno_name(got.err != 0 ? got.err : ENODEV) +
                              "; without proof of their MACs and settings they are not ready",
                          run.target.pci.str());
  }
  return std::nullopt;
}

struct Difference {
  std::size_t at;    // in run.vfs
  std::string what;  // vf_port_difference()
};

// The VFs to check (of `among` only, when given) whose report differs from the plan.
std::vector<Difference> differences(const PfRun& run, const host::Link& pf,
                                    const std::vector<Difference>* among) {
  std::vector<Difference> out;
  for (std::size_t i = 0; i < run.vfs.size(); ++i) {
    const auto& vs = run.vfs[i];
    if (!to_check(run, vs) ||
        (among && std::none_of(among->begin(), among->end(),
                               [&](const Difference& d) { return d.at == i; }))) {
      continue;
    }
    const auto* port = reported(pf, vs.index);
    auto what = port ? vf_port_difference(run.target.vf[vs.index], run.target.vf_port, *port)
                     : std::string("nothing reported of it");
    if (!what.empty()) {
      out.push_back({i, std::move(what)});
    }
  }
  return out;
}

}  // namespace

std::string vf_port_difference(const model::VfTarget& vt, const model::VfPortConfig& want,
                               const host::VfPort& got) {
  std::string out;
  const auto differs = [&](const std::string& has, const std::string& planned) {
    out += (out.empty() ? "" : ", ") + has + ", not " + planned;
  };
  if (vt.mac && got.mac != vt.mac) {
    differs("MAC " + (got.mac ? got.mac->str() : std::string("none")), vt.mac->str());
  }
  if (want.vlan && (got.vlan != *want.vlan || got.qos != want.qos)) {
    differs("vlan " + std::to_string(got.vlan) + " qos " + std::to_string(got.qos),
            "vlan " + std::to_string(*want.vlan) + " qos " + std::to_string(want.qos));
  }
  // A setting the driver does not report (-1) cannot differ: its set was acknowledged.
  if (want.spoofchk && got.spoofchk && *got.spoofchk != *want.spoofchk) {
    differs("spoof checking " + on_off(*got.spoofchk), on_off(*want.spoofchk));
  }
  if (want.trust && got.trust && *got.trust != *want.trust) {
    differs("trust " + on_off(*got.trust), on_off(*want.trust));
  }
  if (want.link_state && got.link_state && *got.link_state != *want.link_state) {
    differs(std::string("link state ") + model::to_string(*got.link_state),
            model::to_string(*want.link_state));
  }
  return out;
}

Task<StepResult> check_vf_ports(PfRun& run) {
  if (!has_vf_ports(run)) {
    co_return StepResult::done();
  }
  // Once; then again after the VFs that differ were given their MAC and settings again.
  std::vector<Difference> differing;
  for (int look = 0; look < 2; ++look) {
    auto asked = answer(run.os.links.start(
        {.kind = host::LinkRequest::Kind::kGet, .ifindex = run.info.ifindex, .vfs = true}));
    const auto got = co_await asked;
    if (auto problem = lookup_problem(run, got)) {
      co_return StepResult::failed(std::move(*problem));
    }
    differing = differences(run, *got.link, look == 0 ? nullptr : &differing);
    if (look == 1 || differing.empty()) {
      break;
    }
    for (const auto& d : differing) {
      const auto& vt = run.target.vf[run.vfs[d.at].index];
      auto set = answer(run.os.links.start(vf_port_request(run, vt)));
      const int err = (co_await set).err;
      if (auto result = vf_port_set(run, vt, err); result.is_failed()) {
        run.vfs[d.at].problems.push_back(std::move(result.problems.front()));
      } else {
        ++run.status.changes.macs_set;  // the MAC with the settings: one request
      }
    }
  }
  for (const auto& d : differing) {
    auto& vs = run.vfs[d.at];
    if (vs.problems.empty()) {
      vs.problems.push_back(model::problem(
          model::EventKind::kMacSetFailed,
          "VF " + std::to_string(vs.index) + " of " + pf_said(run) + " has " + d.what +
              " as its PF's driver reports it (IFLA_VFINFO_LIST), after they were set twice",
          run.target.pci.str(), vs.pci.str()));
    }
  }
  co_return StepResult::done();
}

}  // namespace vfready::pipeline
