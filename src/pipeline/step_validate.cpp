// SPDX-License-Identifier: Apache-2.0
// Step "validate": everything read back; what is not as configured is a problem.
#include <algorithm>
#include <cerrno>
#include <span>

#include "vfready/host/errno_name.hpp"
#include "vfready/pipeline/call_answer.hpp"
#include "vfready/pipeline/steps.hpp"

namespace vfready::pipeline {

namespace {

bool active(const std::string& state) { return model::port_active(state); }

// A read of the PF's port that answered no state: the PF gone, stuck, or the errno.
model::Problem port_read_failed(PfRun& run, const host::PortRead& port) {
  const auto pci = run.target.pci.str();
  if (port.vanished) {
    return model::problem(model::EventKind::kPfVanished, "PF " + pci + " vanished", pci);
  }
  if (port.err == host::kStuck) {
    return stuck_problem(run);
  }
  return model::problem(model::EventKind::kHostReadFailed,
                        "reading port 1 of PF " + pci + " (" + port.ib_device.value_or("?") +
                            ") failed: " + host::errno_name(port.err),
                        pci);
}

void add(PfRun& run, VfWork& vs, model::EventKind kind, std::string text) {
  vs.problems.push_back(model::problem(kind, std::move(text), run.status.pci.str(), vs.pci.str()));
}

// An Ethernet VF's MAC: its netdev's own address, as the kernel answered for it, which is
// what a pod gets. The PF's IFLA_VF_MAC would say what was asked, not what the VF took
// (igb keeps a MAC set while the PF is down from the VF, and udev may have rewritten it
// since). A link the namer renamed as udev announced it was not looked up: sysfs has it.
// False, with a problem, when it is not the planned one or cannot be read.
bool mac_right(PfRun& run, VfWork& vs, const model::VfTarget& vt, const host::Link& link) {
  vs.mac = link.mac ? link.mac : run.os.reads.netdev_mac(link.name);
  vs.mac_made_up = false;
  if (!vt.mac || !vs.problems.empty() || vs.in_use) {
    return true;
  }
  if (vs.mac == vt.mac) {
    vs.mac_made_up = run.os.reads.netdev_mac_random(link.name);
    return true;
  }
  add(run, vs, model::EventKind::kMacWrong,
      vs.mac ? "VF " + vs.pci.str() + " (" + link.name + ") has MAC " + vs.mac->str() + ", not " +
                   vt.mac->str()
             : "the MAC of VF " + vs.pci.str() + " (" + link.name +
                   ") cannot be read back: without proof that it is " + vt.mac->str() +
                   " it is not ready");
  return false;
}

// Whether an Ethernet VF is left as it is for its MAC: not (reprobe it) when its MAC is
// wrong, or right but made up by its driver, not taken from the PF (no problem then, if
// a second probe does the same).
bool mac_keeps(PfRun& run, VfWork& vs, const model::VfTarget& vt, const host::Link& link) {
  if (!mac_right(run, vs, vt, link)) {
    return !vs.mac;  // unreadable: another probe would not tell either
  }
  return !vs.mac_made_up;
}

// A VF's name and altnames against the plan, with a problem for the first that is not.
void names_right(PfRun& run, VfWork& vs, const model::VfTarget& vt, const host::Link& link) {
  if (vt.name && link.name != vt.name->str() && vs.problems.empty()) {
    add(run, vs, model::EventKind::kNameMismatch,
        "VF " + vs.pci.str() + " is named " + link.name + ", not " + vt.name->str());
  }
  for (const auto& alt : vt.altnames) {
    if (std::find(link.altnames.begin(), link.altnames.end(), alt.str()) == link.altnames.end() &&
        vs.problems.empty()) {
      add(run, vs, model::EventKind::kNameMismatch,
          "VF " + vs.pci.str() + " lacks altname " + alt.str());
    }
  }
}

// A VF's MTU against the plan, with a problem when it is not the planned one. IPoIB
// gives a netdev min(its broadcast group's MTU, the one asked for), and answers the
// request with success (ipoib_change_mtu(), drivers/infiniband/ulp/ipoib): its MTU is
// read back from sysfs, not taken from the namer's answer.
void mtu_right(PfRun& run, VfWork& vs, const model::VfTarget& vt, const host::Link& link,
               bool ethernet) {
  if (!vt.mtu) {
    return;
  }
  const uint32_t mtu = ethernet ? link.mtu : run.os.reads.netdev_mtu(link.name).value_or(link.mtu);
  if (mtu == *vt.mtu || !vs.problems.empty()) {
    return;
  }
  const bool group = !ethernet && mtu < *vt.mtu;
  add(run, vs, model::EventKind::kLinkConfigFailed,
      "VF " + vs.pci.str() + " (" + link.name + ") has MTU " + std::to_string(mtu) + ", not " +
          std::to_string(*vt.mtu) +
          (group ? ": an IPoIB netdev's MTU is at most its partition's broadcast group's, "
                   "which the subnet manager sets; configure that MTU, or raise the group's"
                 : ""));
}

// What the plan gives the PF's netdev (name, altnames, MTU), read back as a VF's is: a PF
// is not ready with less (its naming skipped when a request could not be made). Nothing
// is added where naming has said why already.
std::optional<model::Problem> pf_link_problem(const PfRun& run,
                                              const std::optional<host::Link>& link, int err) {
  const auto& t = run.target;
  if (!t.name && t.altnames.empty() && !t.mtu) {
    return std::nullopt;
  }
  for (const auto& p : run.status.problems) {
    using K = model::EventKind;
    if (p.kind == K::kLinkUpNotRenamed || p.kind == K::kNameConflict ||
        p.kind == K::kLinkConfigFailed || p.kind == K::kNetdevGone || p.kind == K::kPfStuck) {
      return std::nullopt;
    }
  }
  const auto pf = "PF " + t.pci.str();
  const auto at = [&](model::EventKind kind, const std::string& text) {
    return model::problem(kind, text, t.pci.str());
  };
  if (!link) {
    const auto ifindex = run.status.ifindex;
    return at(model::EventKind::kNameMismatch,
              ifindex == 0 ? pf + " has no netdev to give its planned name, altnames and MTU"
                           : "the netlink lookup of the netdev of " + pf + " (ifindex " +
                                 std::to_string(ifindex) + ") failed: " +
                                 (err == 0 || err == ENODEV ? std::string("it is gone")
                                                            : host::errno_name(err)) +
                                 "; without proof of its name, altnames and MTU it is not ready");
  }
  if (t.name && link->name != t.name->str()) {
    return at(model::EventKind::kNameMismatch,
              pf + " is named " + link->name + ", not " + t.name->str());
  }
  for (const auto& alt : t.altnames) {
    if (std::find(link->altnames.begin(), link->altnames.end(), alt.str()) ==
        link->altnames.end()) {
      return at(model::EventKind::kNameMismatch,
                pf + " (" + link->name + ") lacks altname " + alt.str());
    }
  }
  if (t.mtu && link->mtu != *t.mtu) {
    return at(model::EventKind::kLinkConfigFailed, pf + " (" + link->name + ") has MTU " +
                                                       std::to_string(link->mtu) + ", not " +
                                                       std::to_string(*t.mtu));
  }
  return std::nullopt;
}

}  // namespace

Task<host::ReadGuids> read_back_guids(PfRun& run, std::vector<uint16_t> indices) {
  host::ReadGuids out;
  out.reserve(indices.size());
  constexpr auto kBatch = host::SriovCalls::kMaxGuidReads;
  for (std::size_t at = 0; at < indices.size(); at += kBatch) {
    const auto batch = std::span(indices).subspan(at, std::min(kBatch, indices.size() - at));
    auto read =
        answer(run.os.calls.start_read_vf_guids(run.target.pci, batch, run.info.ofed_sriov));
    auto got = co_await read;
    got.resize(batch.size());
    out.insert(out.end(), got.begin(), got.end());
  }
  co_return out;
}

Task<Done> links_read_back(PfRun& run, std::vector<int> ifindices) {
  run.named.clear();
  run.link_errors.clear();
  for (std::size_t i = 0; i < ifindices.size(); ++i) {
    const int ifindex = ifindices[i];
    auto asked = answer(run.os.links.start({host::LinkRequest::Kind::kGet, ifindex}));
    const auto got = co_await asked;
    if (got.link) {
      run.named[ifindex] = *got.link;
      continue;
    }
    run.link_errors[ifindex] = got.err == 0 ? ENODEV : got.err;
    if (got.err == host::kStuck) {
      // rtnl_lock is held: the rest are not asked, and validate_vf says each is stuck.
      for (std::size_t j = i + 1; j < ifindices.size(); ++j) {
        run.link_errors[ifindices[j]] = host::kStuck;
      }
      co_return Done{};
    }
  }
  co_return Done{};
}

// Why validation sends VF `vs` back to its probe, as a warning of its PF: the problem it
// found (a wrong GUID or MAC), or a MAC its driver made up rather than took from the PF.
model::Problem reprobe_reason(const PfRun& run, const VfWork& vs) {
  auto why = vs.problems.empty()
                 ? model::problem(model::EventKind::kMacWrong,
                                  "the driver of VF " + vs.pci.str() + " (" + vs.name +
                                      ") made up its MAC" + (vs.mac ? " " + vs.mac->str() : "") +
                                      " (addr_assign_type 1) rather than take it from the PF",
                                  run.status.pci.str(), vs.pci.str())
                 : vs.problems.front();
  why.text += ": probed once more";
  return why;
}

bool validate_vf(PfRun& run, VfWork& vs, const std::optional<model::Guid>& read_back) {
  const auto& vt = run.target.vf.at(vs.index);
  // The GUID its port uses, read back: a VF is ready only with proof that it is its own.
  // An Ethernet port has no GUID: nothing to prove.
  const bool ethernet = guid_path(run.info) == GuidPath::kEthernet;
  const auto& effective = read_back;
  vs.guid = ethernet ? std::nullopt : effective;
  const bool guid_right = ethernet || effective == vt.guid;
  if (!guid_right && vs.problems.empty() && !vs.in_use) {
    add(run, vs, model::EventKind::kGuidWrong,
        effective
            ? "VF " + vs.pci.str() + " uses GUID " + effective->str() + ", not " + vt.guid.str()
            : "the GUID of VF " + vs.pci.str() +
                  " cannot be read back (no OFED sriov/ files, and the VF has no RDMA "
                  "device: is mlx5_ib loaded?): without proof that it uses " +
                  vt.guid.str() + " it is not ready");
  }
  // False (reprobe it) only when its GUID is known wrong: when nothing can read it back,
  // another probe would not tell either.
  bool keep = guid_right || !effective;
  if (vs.ifindex == 0) {
    return keep;
  }
  // As the kernel answered the pass's last request about the link (naming's, or a
  // lookup of links_read_back()): none when it was gone, or the request did not return.
  const auto named = run.named.find(vs.ifindex);
  if (named == run.named.end()) {
    const auto error = run.link_errors.find(vs.ifindex);
    const int err = error == run.link_errors.end() ? ENODEV : error->second;
    if (err == host::kStuck ||
        (error == run.link_errors.end() && run.os.calls.stuck(run.target.pci))) {
      vs.problems.push_back(stuck_problem(run));  // a lookup on rtnl_lock did not return
    } else if (err == ENODEV) {
      add(run, vs, model::EventKind::kNetdevGone, "netdev " + vs.name + " is gone");
    } else {
      add(run, vs, model::EventKind::kHostReadFailed,
          "the netlink lookup of netdev " + vs.name + " (ifindex " + std::to_string(vs.ifindex) +
              ") failed: " + host::errno_name(err));
    }
    return keep;
  }
  const auto* link = &named->second;
  vs.name = link->name;
  vs.altnames = link->altnames;
  if (ethernet) {
    keep = mac_keeps(run, vs, vt, *link);  // (an Ethernet VF's GUID is always right)
  }
  names_right(run, vs, vt, *link);
  mtu_right(run, vs, vt, *link, ethernet);
  return keep;
}

Task<StepResult> validate_pf(PfRun& run) {
  auto& status = run.status;
  auto reading = answer(run.os.calls.start_read_port(run.target.pci));
  const auto port = co_await reading;
  if (port.vanished || port.err != 0) {
    co_return StepResult::failed(port_read_failed(run, port));
  }
  // The PF's name as netlink has it, as for its VFs: its own rename has just happened,
  // and netlink is where it happened.
  std::optional<host::Link> link;
  int link_err = 0;
  if (status.ifindex != 0) {
    auto asked = answer(run.os.links.start({host::LinkRequest::Kind::kGet, status.ifindex}));
    const auto got = co_await asked;
    if (got.err == host::kStuck) {
      co_return StepResult::failed(stuck_problem(run));  // a lookup on rtnl_lock
    }
    link = got.link;
    link_err = got.err;
  }
  status.name = link ? link->name : port.netdev.value_or("");
  // A PF without an RDMA device has no port to read: its netdev's type says.
  status.link_layer = port.ib_device ? port.link_layer : run.info.link_layer();
  status.port_state = port.state;
  run.info.ib_device = port.ib_device;
  run.info.rdma_over_netdev = port.rdma_over_netdev;
  status.rdma_device = port.ib_device.value_or("");
  if (auto problem = pf_link_problem(run, link, link_err)) {
    co_return StepResult::failed(std::move(*problem));
  }
  co_return StepResult::done();
}

Task<StepResult> await_port_active(PfRun& run, Wait::Clock::time_point until) {
  auto& status = run.status;
  // The subnet manager moves the port INIT -> ARMED -> ACTIVE; sysfs has no event for
  // it, so it is looked at again until ACTIVE or the bound.
  while (run.target.require_port_active && run.info.ib_device && !active(status.port_state)) {
    if (Wait::Clock::now() >= until) {
      co_return StepResult::failed(model::problem(
          model::EventKind::kPortNotActive,
          "port 1 of PF " + run.target.pci.str() + " is \"" + status.port_state +
              "\", not ACTIVE after " + std::to_string(run.config.timeouts.port_active_ms) +
              " ms: check the cable and the subnet manager",
          run.target.pci.str()));
    }
    const auto later = Wait::time(std::min(until, Wait::Clock::now() + kPortLookEvery));
    co_await later;
    auto reading = answer(run.os.calls.start_read_port(run.target.pci));
    const auto port = co_await reading;
    if (port.vanished || port.err != 0) {
      co_return StepResult::failed(port_read_failed(run, port));
    }
    status.port_state = port.state;
  }
  co_return StepResult::done();
}

}  // namespace vfready::pipeline
