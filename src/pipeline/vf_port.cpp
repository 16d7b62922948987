// SPDX-License-Identifier: Apache-2.0
// An Ethernet VF's MAC and settings, set through its PF's netdev (steps.hpp): the request
// and its answer judged.
#include <cerrno>
#include <string>

#include "vfready/host/errno_name.hpp"
#include "vfready/pipeline/steps.hpp"

namespace vfready::pipeline {

host::LinkRequest vf_port_request(const PfRun& run, const model::VfTarget& vt) {
  return {.kind = host::LinkRequest::Kind::kSetVfPort,
          .ifindex = run.info.ifindex,
          .vf = vt.index,
          .mac = vt.mac,
          .vf_port = run.target.vf_port};
}

StepResult vf_port_set(PfRun& run, const model::VfTarget& vt, int err) {
  if (err == host::kStuck) {
    return StepResult::failed(stuck_problem(run));  // rtnl_lock is held
  }
  if (err != 0) {
    const auto& port = run.target.vf_port;
    std::string what = vt.mac ? "MAC " + vt.mac->str() : std::string();
    const auto also = [&](const std::string& s) { what += (what.empty() ? "" : ", ") + s; };
    if (port.vlan) {
      also("vlan " + std::to_string(*port.vlan) + " qos " + std::to_string(port.qos));
    }
    if (port.spoofchk) {
      also(std::string("spoofchk ") + (*port.spoofchk ? "on" : "off"));
    }
    if (port.link_state) {
      also(std::string("state ") + model::to_string(*port.link_state));
    }
    if (port.trust) {
      also(std::string("trust ") + (*port.trust ? "on" : "off"));
    }
    return StepResult::failed(model::problem(
        model::EventKind::kMacSetFailed,
        "setting " + what + " of VF " + std::to_string(vt.index) + " through netlink on " +
            run.info.netdev.value_or("?") + " failed: " + host::errno_name(err) +
            (err == EOPNOTSUPP ? " (its driver has no such setting)" : ""),
        run.target.pci.str(), vt.pci ? vt.pci->str() : ""));
  }
  return StepResult::done();
}

}  // namespace vfready::pipeline
