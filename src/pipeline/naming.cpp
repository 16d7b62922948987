// SPDX-License-Identifier: Apache-2.0
// Step "names": PF and VF names, altnames and MTU over netlink. A name held by another
// netdev vfready manages is moved aside through a temporary name; one held by
// anything else is a conflict, reported and never taken.
#include <algorithm>
#include <cerrno>
#include <map>

#include "vfready/host/errno_name.hpp"
#include "vfready/model/kernel_features.hpp"
#include "vfready/pipeline/started_call.hpp"
#include "vfready/pipeline/steps.hpp"

namespace vfready::pipeline {

namespace {

using host::LinkRequest;

// A link request, made where the host makes it (a helper, under a deadline), waited for
// here.
host::LinkAnswer made(host::Links& links, const LinkRequest& request) {
  auto call = links.start(request);
  while (!answer_due(*call, Wait::Clock::now())) {
    wait_for(Wait::fd_or_time(call->fd(), call->until()));
  }
  return call->finish();
}

class Namer {
 public:
  // Problems name `pf` and, for a VF's netdev, `vf` (PCI addresses).
  Namer(PfHost& os, NameRegistry& names, std::string pf, std::string vf, std::string kernel_release)
      : os_(os),
        names_(names),
        pf_(std::move(pf)),
        vf_(std::move(vf)),
        kernel_release_(std::move(kernel_release)),
        renames_up_(model::renames_up_links(kernel_release_)) {}

  // Makes the netdev `ifindex` carry `name`, `altnames` and `mtu`; problems go to `out`.
  // `announced`: the name udev's add event gave a netdev the probe has just made, which
  // is then renamed without asking the kernel first.
  void apply(int ifindex, const std::optional<model::IfName>& name,
             const std::vector<model::AltName>& altnames, std::optional<uint32_t> mtu,
             std::vector<model::Problem>& out, const std::string* announced = nullptr) {
    out_ = &out;
    names_.manage(ifindex);
    rename_with_mtu(ifindex, name, mtu, announced);
    if (stuck_ || (name && !take_name(ifindex, name->str(), out))) {
      return;
    }
    for (const auto& alt : altnames) {
      if (!stuck_) {
        add_altname(ifindex, alt, out);
      }
    }
    if (!stuck_) {
      set_mtu(ifindex, mtu, out);
    }
  }

  [[nodiscard]] const host::Link* find(int ifindex) const {
    auto it = links_.find(ifindex);
    return it == links_.end() ? nullptr : &it->second;
  }
  // Netdevs this namer gave their target names.
  [[nodiscard]] uint32_t renamed() const { return renamed_; }
  // A request did not answer within its deadline: rtnl_lock is held (by a driver that
  // waits on its device), and no request after it is made.
  [[nodiscard]] bool stuck() const { return stuck_; }

 private:
  // `request` made, or answered kStuck at once once one was stuck. The first stuck one
  // is the problem it gives: its PF is then stuck (settle_stuck()).
  host::LinkAnswer request(const LinkRequest& r) {
    if (stuck_) {
      return {host::kStuck};
    }
    auto answer = made(os_.links, r);
    if (answer.err == host::kStuck) {
      stuck_ = true;
      // Said once, for the PF, by settle_stuck(): the host keeps the call that is stuck.
      add(*out_, model::EventKind::kPfStuck, host::describe(r) + " did not return");
    }
    return answer;
  }
  int change(const LinkRequest& r) { return request(r).err; }

  // Name and MTU in one request where both are to change, so that a new VF's netdev
  // takes one rename. Otherwise, or when it fails (a name in use, the netdev gone),
  // the link as the kernel has it is what take_name() and set_mtu() go on from.
  void rename_with_mtu(int ifindex, const std::optional<model::IfName>& name,
                       std::optional<uint32_t> mtu, const std::string* announced) {
    if (announced != nullptr && name && mtu && *announced != name->str()) {
      // Nothing asked first: an MTU the netdev has already is no change to the kernel.
      if (change({LinkRequest::Kind::kSet, ifindex, name->str(), mtu}) == 0) {
        links_[ifindex] = host::Link{ifindex, name->str(), {}, *mtu};
        ++renamed_;
      } else {
        refresh(ifindex);
      }
      return;
    }
    refresh(ifindex);
    const auto* link = find(ifindex);
    if (announced != nullptr || link == nullptr || !name || !mtu || link->name == name->str() ||
        link->mtu == *mtu || (link->up && !renames_up_)) {
      return;
    }
    if (change({LinkRequest::Kind::kSet, ifindex, name->str(), mtu}) == 0) {
      links_[ifindex].name = name->str();
      links_[ifindex].mtu = *mtu;
      ++renamed_;
    } else {
      refresh(ifindex);
    }
  }

  void add_altname(int ifindex, const model::AltName& alt, std::vector<model::Problem>& out) {
    const auto* link = find(ifindex);
    if (link == nullptr || std::find(link->altnames.begin(), link->altnames.end(), alt.str()) !=
                               link->altnames.end()) {
      return;
    }
    // As for names: most altnames are free, so the add is tried first, and only one
    // in use (EEXIST) makes its holder a question.
    int err = change({LinkRequest::Kind::kAddAltname, ifindex, alt.str()});
    if (err == EEXIST) {
      const int holder = holder_of(alt.str());
      if (holder == ifindex) {
        return;  // it has it already (udev gave it, say): the lookup recorded it
      }
      if (holder != 0 && !free_name(holder, alt.str(), out)) {
        return;
      }
      err = change({LinkRequest::Kind::kAddAltname, ifindex, alt.str()});
    }
    if (stuck_) {
      return;
    }
    if (err != 0) {
      add(out, model::EventKind::kLinkConfigFailed,
          "adding altname " + alt.str() + " to " + link->name +
              " failed: " + host::errno_name(err));
      refresh(ifindex);
    } else {
      links_[ifindex].altnames.push_back(alt.str());
    }
  }

  void set_mtu(int ifindex, std::optional<uint32_t> mtu, std::vector<model::Problem>& out) {
    const auto* link = find(ifindex);
    if (!mtu || link == nullptr || link->mtu == *mtu) {
      return;
    }
    const int err = change({LinkRequest::Kind::kSet, ifindex, {}, mtu});
    if (err != 0 && !stuck_) {
      add(out, model::EventKind::kLinkConfigFailed,
          "setting MTU " + std::to_string(*mtu) + " on " + link->name +
              " failed: " + host::errno_name(err));
      refresh(ifindex);
    } else {
      links_[ifindex].mtu = *mtu;
    }
  }

  void add(std::vector<model::Problem>& out, model::EventKind kind, std::string text) const {
    out.push_back(model::problem(kind, std::move(text), pf_, vf_));
  }

  // The links this naming has looked at, as the kernel has them now: each is asked for
  // again after a change to it. (A dump of every link per PF, or per change, made
  // naming cost grow with the square of the VFs.)
  void refresh(int ifindex) {
    auto answer = request({LinkRequest::Kind::kGet, ifindex});
    if (answer.link) {
      links_[ifindex] = std::move(*answer.link);
    } else if (answer.err != host::kStuck) {
      links_.erase(ifindex);
    }
  }

  // The ifindex whose name or altname `name` is; 0 for none.
  [[nodiscard]] int holder_of(const std::string& name) {
    auto link = request({LinkRequest::Kind::kByName, 0, name}).link;
    if (!link) {
      return 0;
    }
    const int ifindex = link->ifindex;
    links_[ifindex] = std::move(*link);
    return ifindex;
  }

  // Whether vfready manages a netdev: one it named in this run, or one whose device
  // is a configured PF or a VF of one (found through sysfs, so it holds after a restart).
  bool ours(int ifindex, const std::string& name) {
    if (names_.managed(ifindex)) {
      return true;
    }
    const auto device = os_.reads.device_of_netdev(name);
    return (device.pci && names_.is_configured_pf(*device.pci)) ||
           (device.physfn && names_.is_configured_pf(*device.physfn));
  }

  // Frees `name` from the netdev `holder` if vfready manages it.
  bool free_name(int holder, const std::string& name, std::vector<model::Problem>& out) {
    const auto link = links_.at(holder);
    if (!ours(holder, link.name)) {
      add(out, model::EventKind::kNameConflict,
          "name " + name + " is held by " + link.name + " (ifindex " + std::to_string(holder) +
              "), which vfready does not manage: left alone");
      return false;
    }
    int err = 0;
    if (link.name == name) {
      err = change({LinkRequest::Kind::kSet, holder, "vfrtmp" + std::to_string(holder)});
    } else {
      err = change({LinkRequest::Kind::kDelAltname, holder, name});
    }
    refresh(holder);
    if (err != 0 && !stuck_) {
      add(out, model::EventKind::kLinkConfigFailed,
          "freeing name " + name + " from " + link.name + " failed: " + host::errno_name(err));
    }
    return err == 0;
  }

  bool take_name(int ifindex, const std::string& name, std::vector<model::Problem>& out) {
    const auto* link = find(ifindex);
    if (link == nullptr) {
      add(out, model::EventKind::kNetdevGone,
          "netdev with ifindex " + std::to_string(ifindex) + " is gone");
      return false;
    }
    if (link->name == name) {
      return true;
    }
    const std::string old = link->name;
    if (link->up && !renames_up_) {
      left_up(old, name, out);  // what else it needs (altnames, MTU) it still gets
      return true;
    }
    // Most names are free: the rename is tried first, and only a name in use (EEXIST)
    // makes the holder a question.
    int err = change({LinkRequest::Kind::kSet, ifindex, name});
    bool was_altname = false;
    if (err == EEXIST) {
      const int holder = holder_of(name);
      if (holder == ifindex) {
        // One of its own altnames (udev gives the predictable names it did not choose
        // as altnames): the kernel refuses a rename to it (EEXIST) until it is dropped.
        was_altname = true;
        err = change({LinkRequest::Kind::kDelAltname, ifindex, name});
      } else if (holder != 0 && !free_name(holder, name, out)) {
        refresh(ifindex);
        return false;
      }
      if (err == 0 || err == EEXIST) {
        err = change({LinkRequest::Kind::kSet, ifindex, name});
      }
      if (err != 0 && was_altname) {
        change({LinkRequest::Kind::kAddAltname, ifindex, name});  // as it was: its own again
      }
    }
    if (stuck_) {
      return false;
    }
    if (err == EBUSY) {
      // An UP netdev on a kernel that renames none (the release did not tell).
      refresh(ifindex);
      left_up(old, name, out);
      return true;
    }
    if (err != 0) {
      refresh(ifindex);
      add(out, model::EventKind::kLinkConfigFailed,
          "renaming " + old + " to " + name + " failed: " + host::errno_name(err));
      return false;
    }
    links_[ifindex].name = name;  // what the kernel now has: no need to ask
    ++renamed_;
    return true;
  }

  // The netdev `old`, up, keeps its name: vfready never sets a link down behind its
  // users' back, and this kernel renames none that is up.
  void left_up(const std::string& old, const std::string& name,
               std::vector<model::Problem>& out) const {
    add(out, model::EventKind::kLinkUpNotRenamed,
        "netdev " + old + " is up, and kernel " + kernel_release_ +
            " renames no netdev that is up (Linux 6.2 and later do): left as " + old +
            ", not renamed to " + name +
            "; it is renamed at the next boot, before it is up, "
            "or set it down (ip link set " +
            old + " down) and run vfreadyctl reconcile");
  }

  PfHost& os_;
  NameRegistry& names_;
  std::string pf_;
  std::string vf_;
  std::string kernel_release_;
  bool renames_up_ = true;
  std::map<int, host::Link> links_;
  uint32_t renamed_ = 0;
  bool stuck_ = false;
  std::vector<model::Problem>* out_ = nullptr;  // apply()'s
};

}  // namespace

void name_pf(PfRun& run) {
  // The PF's netdev, found through sysfs as the VFs' are.
  const auto netdev = run.os.reads.netdev_of(run.target.pci);
  const auto link = netdev ? run.os.links.by_name(*netdev) : std::nullopt;
  if (!link) {
    return;
  }
  const auto& target = run.target;
  std::lock_guard lock(run.names.mutex());
  Namer namer(run.os, run.names, run.status.pci.str(), "", run.kernel_release);
  namer.apply(link->ifindex, target.name, target.altnames, target.mtu, run.status.problems);
  run.status.changes.links_renamed += namer.renamed();
}

Naming name_vf(PfRun& run, VfWork& vs, bool announced) {
  if (vs.ifindex == 0) {
    return Naming::kNamed;
  }
  const auto& vt = run.target.vf.at(vs.index);
  std::lock_guard lock(run.names.mutex());
  Namer namer(run.os, run.names, run.status.pci.str(), vs.pci.str(), run.kernel_release);
  std::vector<model::Problem> problems;
  namer.apply(vs.ifindex, vt.name, vt.altnames, vt.mtu, problems,
              announced && !vs.name.empty() ? &vs.name : nullptr);
  run.status.changes.links_renamed += namer.renamed();
  if (namer.stuck()) {
    vs.problems.insert(vs.problems.end(), problems.begin(), problems.end());
    return Naming::kStuck;
  }
  const auto* link = namer.find(vs.ifindex);
  if (link == nullptr) {
    run.named.erase(vs.ifindex);
    if (announced) {
      return Naming::kGone;  // nothing of it is the VF's to report
    }
  } else {
    run.named[vs.ifindex] = *link;
  }
  vs.problems.insert(vs.problems.end(), problems.begin(), problems.end());
  return Naming::kNamed;
}

}  // namespace vfready::pipeline
