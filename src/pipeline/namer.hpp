// SPDX-License-Identifier: Apache-2.0
// How one netdev gets its name, altnames and MTU (naming.cpp runs it for the PF and
// each VF, in a naming turn). A name held by another netdev vfready manages is moved
// aside through a temporary name; one held by anything else is a conflict, reported
// and never taken.
#pragma once

#include <algorithm>
#include <cerrno>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vfready/host/errno_name.hpp"
#include "vfready/pipeline/call_answer.hpp"
#include "vfready/pipeline/steps.hpp"

namespace vfready::pipeline {

// Each method that asks the kernel is a task that awaits its link requests (started
// through Links::start: a helper makes each, under a deadline). Arguments that a task
// keeps are taken by value: its caller's temporaries are gone by the time it resumes.
class Namer {
 public:
  using LinkRequest = host::LinkRequest;

  // Problems name `pf` and, for a VF's netdev, `vf` (PCI addresses), and go to `out`.
  // `kernel_release` (uname -r) outlives the namer; `renames_up` is what
  // model::renames_up_links() says of it.
  Namer(PfHost& os, NameRegistry& names, std::string pf, std::string vf,
        const std::string& kernel_release, bool renames_up, std::vector<model::Problem>& out)
      : os_(os),
        names_(names),
        pf_(std::move(pf)),
        vf_(std::move(vf)),
        kernel_release_(kernel_release),
        renames_up_(renames_up),
        out_(out) {}

  // Makes the netdev `ifindex` carry `name`, `altnames` and `mtu`. `announced`: the name
  // udev's add event gave a netdev the probe has just made, which is then renamed
  // without asking the kernel first. In the caller's naming turn.
  Task<Done> apply(int ifindex, std::optional<model::IfName> name,
                   std::vector<model::AltName> altnames, std::optional<uint32_t> mtu,
                   std::optional<std::string> announced) {
    names_.manage(ifindex);
    auto renamed = rename_with_mtu(ifindex, name, mtu, announced);
    co_await renamed;
    if (stuck_) {
      co_return Done{};
    }
    if (name) {
      auto taken = take_name(ifindex, name->str());
      if (!co_await taken) {
        co_return Done{};
      }
    }
    for (const auto& alt : altnames) {
      if (!stuck_) {
        auto added = add_altname(ifindex, alt.str());
        co_await added;
      }
    }
    if (!stuck_) {
      auto set = set_mtu(ifindex, mtu);
      co_await set;
    }
    co_return Done{};
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

  // The link whose name or altname `name` is, if any.
  Task<std::optional<host::Link>> look_up(std::string name) {
    auto asked = request({LinkRequest::Kind::kByName, 0, name});
    auto got = co_await asked;
    if (!got.link && got.err != 0 && got.err != ENODEV && got.err != host::kStuck) {
      // Not the netdev's absence: the request itself failed (EMFILE, EAGAIN: no helper).
      add(model::EventKind::kLinkConfigFailed,
          "looking up netdev " + name + " over netlink failed: " + host::errno_name(got.err));
    }
    co_return got.link;
  }

 private:
  // `r` made, or answered kStuck at once once one was stuck. The first stuck one is
  // the problem it gives: its PF is then stuck (settle_stuck(), which says it once).
  Task<host::LinkAnswer> request(LinkRequest r) {
    if (stuck_) {
      co_return host::LinkAnswer{host::kStuck};
    }
    auto made = answer(os_.links.start(r));
    auto got = co_await made;
    if (got.err == host::kStuck) {
      stuck_ = true;
      add(model::EventKind::kPfStuck, host::describe(r) + " did not return");
    }
    co_return got;
  }
  Task<int> change(LinkRequest r) {
    auto made = request(std::move(r));
    const auto got = co_await made;
    co_return got.err;
  }

  // Name and MTU in one request where both are to change, so that a new VF's netdev
  // takes one rename. Otherwise, or when it fails (a name in use, the netdev gone),
  // the link as the kernel has it is what take_name() and set_mtu() go on from.
  Task<Done> rename_with_mtu(int ifindex, std::optional<model::IfName> name,
                             std::optional<uint32_t> mtu, std::optional<std::string> announced) {
    if (announced && name && mtu && *announced != name->str()) {
      // Nothing asked first: an MTU the netdev has already is no change to the kernel.
      auto set = change({LinkRequest::Kind::kSet, ifindex, name->str(), mtu});
      if (co_await set == 0) {
        links_[ifindex] = host::Link{ifindex, name->str(), {}, *mtu};
        ++renamed_;
      } else {
        auto looked = refresh(ifindex);
        co_await looked;
      }
      co_return Done{};
    }
    auto looked = refresh(ifindex);
    co_await looked;
    const auto* link = find(ifindex);
    if (announced || link == nullptr || !name || !mtu || link->name == name->str() ||
        link->mtu == *mtu || (link->up && !renames_up_)) {
      co_return Done{};
    }
    auto set = change({LinkRequest::Kind::kSet, ifindex, name->str(), mtu});
    if (co_await set == 0) {
      links_[ifindex].name = name->str();
      links_[ifindex].mtu = *mtu;
      ++renamed_;
    } else {
      auto again = refresh(ifindex);
      co_await again;
    }
    co_return Done{};
  }

  Task<Done> add_altname(int ifindex, std::string alt) {
    const auto* link = find(ifindex);
    if (link == nullptr ||
        std::find(link->altnames.begin(), link->altnames.end(), alt) != link->altnames.end()) {
      co_return Done{};
    }
    const std::string on = link->name;
    // As for names: most altnames are free, so the add is tried first, and only one
    // in use (EEXIST) makes its holder a question.
    auto add_it = change({LinkRequest::Kind::kAddAltname, ifindex, alt});
    int err = co_await add_it;
    if (err == EEXIST) {
      auto asked = holder_of(alt);
      const int holder = co_await asked;
      if (holder == ifindex) {
        co_return Done{};  // it has it already (udev gave it, say): the lookup recorded it
      }
      if (holder != 0) {
        auto freed = free_name(holder, alt);
        if (!co_await freed) {
          co_return Done{};
        }
      }
      auto again = change({LinkRequest::Kind::kAddAltname, ifindex, alt});
      err = co_await again;
    }
    if (stuck_) {
      co_return Done{};
    }
    if (err != 0) {
      add(model::EventKind::kLinkConfigFailed,
          "adding altname " + alt + " to " + on + " failed: " + host::errno_name(err));
      auto looked = refresh(ifindex);
      co_await looked;
    } else {
      links_[ifindex].altnames.push_back(alt);
    }
    co_return Done{};
  }

  Task<Done> set_mtu(int ifindex, std::optional<uint32_t> mtu) {
    const auto* link = find(ifindex);
    if (!mtu || link == nullptr || link->mtu == *mtu) {
      co_return Done{};
    }
    const std::string on = link->name;
    auto set = change({LinkRequest::Kind::kSet, ifindex, {}, mtu});
    const int err = co_await set;
    if (stuck_) {
      co_return Done{};
    }
    if (err != 0) {
      add(model::EventKind::kLinkConfigFailed, "setting MTU " + std::to_string(*mtu) + " on " + on +
                                                   " failed: " + host::errno_name(err));
      auto looked = refresh(ifindex);
      co_await looked;
    } else {
      links_[ifindex].mtu = *mtu;
    }
    co_return Done{};
  }

  void add(model::EventKind kind, std::string text) const {
    out_.push_back(model::problem(kind, std::move(text), pf_, vf_));
  }

  // The links this naming has looked at, as the kernel has them now: each is asked for
  // again after a change to it. (A dump of every link per PF, or per change, made
  // naming cost grow with the square of the VFs.)
  Task<Done> refresh(int ifindex) {
    auto asked = request({LinkRequest::Kind::kGet, ifindex});
    auto got = co_await asked;
    if (got.link) {
      links_[ifindex] = std::move(*got.link);
    } else if (got.err == ENODEV) {
      links_.erase(ifindex);  // gone (another error, a helper that died, says nothing of it)
    }
    co_return Done{};
  }

  // The ifindex whose name or altname `name` is; 0 for none.
  Task<int> holder_of(std::string name) {
    auto asked = request({LinkRequest::Kind::kByName, 0, std::move(name)});
    auto got = co_await asked;
    if (!got.link) {
      co_return 0;
    }
    const int ifindex = got.link->ifindex;
    links_[ifindex] = std::move(*got.link);
    co_return ifindex;
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
  Task<bool> free_name(int holder, std::string name) {
    const auto link = links_.at(holder);
    if (!ours(holder, link.name)) {
      add(model::EventKind::kNameConflict, "name " + name + " is held by " + link.name +
                                               " (ifindex " + std::to_string(holder) +
                                               "), which vfready does not manage: left alone");
      co_return false;
    }
    auto freed = link.name == name
                     ? change({LinkRequest::Kind::kSet, holder, "vfrtmp" + std::to_string(holder)})
                     : change({LinkRequest::Kind::kDelAltname, holder, name});
    const int err = co_await freed;
    auto looked = refresh(holder);
    co_await looked;
    if (err != 0 && !stuck_) {
      add(model::EventKind::kLinkConfigFailed,
          "freeing name " + name + " from " + link.name + " failed: " + host::errno_name(err));
    }
    co_return err == 0;
  }

  Task<bool> take_name(int ifindex, std::string name) {
    const auto* link = find(ifindex);
    if (link == nullptr) {
      add(model::EventKind::kNetdevGone,
          "netdev with ifindex " + std::to_string(ifindex) + " is gone");
      co_return false;
    }
    if (link->name == name) {
      co_return true;
    }
    const std::string old = link->name;
    if (link->up && !renames_up_) {
      left_up(old, name);  // what else it needs (altnames, MTU) it still gets
      co_return true;
    }
    // Most names are free: the rename is tried first, and only a name in use (EEXIST)
    // makes the holder a question.
    auto renamed = change({LinkRequest::Kind::kSet, ifindex, name});
    int err = co_await renamed;
    if (err == EEXIST) {
      auto moved = make_room(ifindex, name);
      err = co_await moved;
    }
    if (stuck_ || err == kNotFreed) {
      co_return false;
    }
    if (err == EBUSY) {
      // An UP netdev on a kernel that renames none (the release did not tell).
      auto looked = refresh(ifindex);
      co_await looked;
      left_up(old, name);
      co_return true;
    }
    if (err != 0) {
      auto looked = refresh(ifindex);
      co_await looked;
      add(model::EventKind::kLinkConfigFailed,
          "renaming " + old + " to " + name + " failed: " + host::errno_name(err));
      co_return false;
    }
    links_[ifindex].name = name;  // what the kernel now has: no need to ask
    ++renamed_;
    co_return true;
  }

  // What make_room() answers when the name's holder kept it (a problem says why).
  static constexpr int kNotFreed = -2;

  // `name` is in use (EEXIST): takes it from its holder, then renames `ifindex` to it
  // again. The rename's errno, or kNotFreed.
  Task<int> make_room(int ifindex, std::string name) {
    auto asked = holder_of(name);
    const int holder = co_await asked;
    int err = 0;
    const bool was_altname = holder == ifindex;
    if (was_altname) {
      // One of its own altnames (udev gives the predictable names it did not choose
      // as altnames): the kernel refuses a rename to it (EEXIST) until it is dropped.
      auto dropped = change({LinkRequest::Kind::kDelAltname, ifindex, name});
      err = co_await dropped;
    } else if (holder != 0) {
      auto freed = free_name(holder, name);
      if (!co_await freed) {
        auto looked = refresh(ifindex);
        co_await looked;
        co_return kNotFreed;
      }
    }
    if (err == 0 || err == EEXIST) {
      auto renamed = change({LinkRequest::Kind::kSet, ifindex, name});
      err = co_await renamed;
    }
    if (err != 0 && was_altname) {
      auto restored = change({LinkRequest::Kind::kAddAltname, ifindex, name});
      co_await restored;  // as it was: the name stays its own
    }
    co_return err;
  }

  // The netdev `old`, up, keeps its name: vfready never sets a link down behind its
  // users' back, and this kernel renames none that is up.
  void left_up(const std::string& old, const std::string& name) const {
    add(model::EventKind::kLinkUpNotRenamed,
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
  const std::string& kernel_release_;
  bool renames_up_ = true;
  std::map<int, host::Link> links_;
  uint32_t renamed_ = 0;
  bool stuck_ = false;
  std::vector<model::Problem>& out_;
};

}  // namespace vfready::pipeline
