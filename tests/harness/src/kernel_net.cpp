// SPDX-License-Identifier: Apache-2.0
// The netdevs of the fake kernel: real ifb links in the namespace, one per bound PF
// and probed VF, and their sysfs entries kept in step with what the kernel says.
#include <chrono>

#include "kernel.hpp"
#include "udev_names.hpp"

namespace vfready::fakehost {

bool infiniband(const FunctionSpec& spec) {
  return spec.infiniband && !spec.infiniband->ports.empty() &&
         spec.infiniband->ports.front().link_layer == "InfiniBand";
}

namespace {

// IPoIB's datagram-mode MTU on a 4K IB MTU; Ethernet's default.
constexpr uint32_t kIpoibMtu = 4092;
constexpr uint32_t kEthernetMtu = 1500;

}  // namespace

void Kernel::bring_up_netdev(std::size_t index, std::optional<uint16_t> vf, const std::string& name,
                             bool at_boot) {
  const auto& spec = *pfs_[index]->spec;
  const bool ib = infiniband(spec);
  const uint32_t mtu = ib ? kIpoibMtu : kEthernetMtu;
  // A name past 15 bytes cannot be had, as udev's rename would fail.
  auto created = name.size() <= 15 ? netdevs_.create(name, mtu) : Error{"name too long"};
  if (!created) {
    // The kernel name is taken (someone renamed another link to it): the driver's
    // own template applies, as when udev's rename fails.
    created = netdevs_.create(ib ? "ib%d" : "eth%d", mtu);
  }
  if (!created) {
    logs_.kmsg(3, "mlx5_core " + spec.pci.str() + ": " + created.error().message);
    return;
  }
  const int ifindex = created.value();
  auto link = netdevs_.get(ifindex);
  if (!link) {
    return;
  }
  const Owner owner{index, vf};
  bool gone = false;
  {
    // Under link_mu_ as well: a link event being followed is judged wholly before the
    // netdev is its function's (passed by; asked again below) or wholly after, never
    // between on_link_event's two looks, where the event of its creation under the
    // temporary name (read late) would pass for someone's rename of it, and udev's rules
    // would keep that name. In the kernel, registration and sysfs are one step under
    // rtnl_lock.
    const std::lock_guard follow(link_mu_);
    std::lock_guard lock(mu_);
    gone = vf && (*vf >= pfs_[index]->vfs.size() || !pfs_[index]->vfs[*vf].bound);
    if (!gone) {
      auto net = net_of(owner);
      net.ifindex = ifindex;
      net.ifname = link->name;
      netdev_owners_[ifindex] = owner;
      links_[ifindex] = link.value();
      add_net_entries(net.dir, net.ifname, ifindex, ib);
    }
  }
  if (gone) {  // unbound or removed while the netdev was being made
    netdevs_.remove(ifindex);
    return;
  }
  if (at_boot) {
    udev_.add_initialized(ifindex, "mlx5_core");
  } else {
    udev_.add(ifindex, "mlx5_core");
  }
  // A rename between creation and registration was not ours to follow yet: ask again.
  if (auto now = netdevs_.get(ifindex)) {
    on_link_event(now.value());
  }
}

UdevNaming Kernel::udev_rules(int ifindex) {
  // The name as the kernel has it now (the link listener may be behind a rename).
  if (auto now = netdevs_.get(ifindex)) {
    on_link_event(now.value());
  }
  std::optional<Owner> owner;
  std::string name;
  bool renamed = false;
  {
    std::lock_guard lock(mu_);
    auto it = netdev_owners_.find(ifindex);
    if (it == netdev_owners_.end()) {
      return {};
    }
    owner = it->second;
    name = net_of(*owner).ifname;
    renamed = renamed_.contains(ifindex);
  }
  if (!owner->vf) {
    return {};  // a PF's netdev keeps the topology's name (docs/fake-host.md)
  }
  const auto& spec = *pfs_[owner->pf]->spec;
  // 99-default.link's NamePolicy= starts with "keep": a netdev someone renamed before
  // udevd got to it keeps that name (its altnames are added all the same).
  const auto policy = renamed && topology_.udev_name_policy != NamePolicy::kNone
                          ? NamePolicy::kKeep
                          : topology_.udev_name_policy;
  return udev_naming(policy, predictable_names(spec, owner->vf, infiniband(spec)), name);
}

void Kernel::udev_apply(int ifindex, const UdevNaming& naming) {
  // udevd logs a rename or altname that fails (the name is taken) and goes on. Its
  // rename is by ifindex, to the name its rules chose, whatever the netdev is called by
  // now (rtnl_set_link_name()).
  if (naming.rename) {
    netdevs_.rename(ifindex, *naming.rename);
  }
  for (const auto& alt : naming.altnames) {
    netdevs_.add_altname(ifindex, alt);
  }
  // The rename reaches sysfs now (and makes the kernel's move), not when the link
  // listener gets to it: udevd's database and add name the netdev as it is then.
  if (auto now = netdevs_.get(ifindex)) {
    on_link_event(now.value());
  }
}

void Kernel::take_down_netdev(const Owner& owner) {
  int ifindex = 0;
  {
    std::lock_guard lock(mu_);
    if (owner.vf && *owner.vf >= pfs_[owner.pf]->vfs.size()) {
      return;
    }
    auto net = net_of(owner);
    if (net.ifindex == 0) {
      return;
    }
    ifindex = net.ifindex;
    remove_net_entries(net.dir, net.ifname);
    netdev_owners_.erase(ifindex);
    links_.erase(ifindex);
    renamed_.erase(ifindex);
    net.ifindex = 0;
    net.ifname.clear();
    // With the owner gone, a move to another namespace that the link listener reads from
    // now on finds this mark instead (on_link_event); one it read before is in departed_.
    unregister_on_departure_.insert(ifindex);
  }
  if (netdevs_.remove(ifindex)) {
    std::lock_guard lock(mu_);
    unregister_on_departure_.erase(ifindex);
  } else {
    // Not here: moved to another namespace just now. It is removed there once the move's
    // RTM_DELLINK, which says where, is followed, before the driver's remove returns, as
    // in the kernel. Bounded: an event lost to a full socket buffer never says.
    std::unique_lock lock(mu_);
    departed_cv_.wait_for(lock, std::chrono::seconds(1),
                          [&] { return !unregister_on_departure_.contains(ifindex); });
    unregister_on_departure_.erase(ifindex);
  }
  udev_.remove(ifindex);
}

void Kernel::unregister_departed(const Owner& owner) {
  std::vector<Departed> gone;
  {
    std::lock_guard lock(mu_);
    std::erase_if(departed_, [&](const auto& d) {
      const bool ours = d.second.owner.pf == owner.pf && d.second.owner.vf == owner.vf;
      if (ours) {
        gone.push_back(d.second);
      }
      return ours;
    });
  }
  for (const auto& d : gone) {
    // There, or back here already (under the ifindex it left with, which the kernel
    // keeps when it is free).
    if (d.netnsid < 0 || d.ifindex <= 0 ||
        !netdevs_.remove_elsewhere(d.netnsid, d.ifindex, d.address)) {
      netdevs_.remove_if_address(d.here, d.address);
    }
  }
}

bool Kernel::take_back_locked(const LinkEvent& event, bool* orphan) {
  auto back = departed_.find(event.ifindex);
  if (back == departed_.end() || event.removed || event.name.empty()) {
    return false;
  }
  const Owner owner = back->second.owner;
  departed_.erase(back);
  auto& pf = *pfs_[owner.pf];
  const bool gone =
      owner.vf ? *owner.vf >= pf.vfs.size() || !pf.vfs[*owner.vf].bound || pf.vfs[*owner.vf].leaving
               : !pf.bound || pf.leaving;
  if (gone) {
    *orphan = true;  // its function went away meanwhile, or is going: its driver unregisters it
    return false;
  }
  auto net = net_of(owner);
  if (net.ifindex != 0) {
    return false;
  }
  net.ifindex = event.ifindex;
  net.ifname = event.name;
  netdev_owners_[event.ifindex] = owner;
  links_[event.ifindex] = event;
  const auto& spec = *pf.spec;
  add_net_entries(net.dir, net.ifname, event.ifindex,
                  spec.infiniband && !spec.infiniband->ports.empty() &&
                      spec.infiniband->ports.front().link_layer == "InfiniBand");
  return true;
}

void Kernel::on_link_event(const LinkEvent& heard) {
  const std::lock_guard follow(link_mu_);
  LinkEvent event = heard;
  if (!event.removed && !event.name.empty()) {
    bool renamed = false;
    {
      std::lock_guard lock(mu_);
      auto it = netdev_owners_.find(event.ifindex);
      renamed = it != netdev_owners_.end() && net_of(it->second).ifname != event.name;
    }
    // Events are read a while after they happen (a netdev's creation under a name it
    // has since left, say): a rename is taken from what the kernel says now.
    if (renamed) {
      auto now = netdevs_.get(event.ifindex);
      if (!now) {
        return;  // gone: its RTM_DELLINK follows
      }
      event = now.value();
    }
  }
  bool removed = false;
  bool taken_back = false;
  std::optional<Departed> unregister;  // a netdev let go of as it left (take_down_netdev)
  bool orphan = false;                 // one back whose function let go of it meanwhile
  std::string moved_from;
  {
    std::lock_guard lock(mu_);
    auto it = netdev_owners_.find(event.ifindex);
    if (it == netdev_owners_.end()) {
      if (event.removed && unregister_on_departure_.contains(event.ifindex)) {
        unregister =
            Departed{{}, event.ifindex, event.new_netnsid, event.new_ifindex, event.address};
      }
      taken_back = take_back_locked(event, &orphan);
    } else if (event.removed) {
      // Deleted, or moved to another namespace (a pod): sysfs loses it as the kernel
      // would; one that comes back is taken back.
      auto net = net_of(it->second);
      departed_[event.ifindex] =
          Departed{it->second, event.ifindex, event.new_netnsid, event.new_ifindex, event.address};
      remove_net_entries(net.dir, net.ifname);
      // A rename stays with it (name_assign_type survives dev_change_net_namespace()).
      netdev_owners_.erase(it);
      links_.erase(event.ifindex);
      net.ifindex = 0;
      net.ifname.clear();
      removed = true;
    } else {
      auto net = net_of(it->second);
      links_[event.ifindex] = event;
      if (!event.name.empty() && event.name != net.ifname) {
        moved_from = "/" + net.dir + "/net/" + net.ifname;
        logs_.rename(event.ifindex, net.ifname, event.name);
        renamed_.insert(event.ifindex);
        tree_.rename(net.dir + "/net/" + net.ifname, net.dir + "/net/" + event.name);
        tree_.remove("class/net/" + net.ifname);
        tree_.add_link("class/net/" + event.name, "../../" + net.dir + "/net/" + event.name);
        net.ifname = event.name;
      }
    }
  }
  if (orphan) {
    netdevs_.remove(event.ifindex);
  }
  if (unregister) {
    if (unregister->netnsid >= 0) {  // else deleted, not moved
      netdevs_.remove_elsewhere(unregister->netnsid, unregister->ifindex, unregister->address);
    }
    std::lock_guard lock(mu_);
    unregister_on_departure_.erase(event.ifindex);
    departed_cv_.notify_all();
  }
  if (taken_back) {
    udev_.add(event.ifindex, "mlx5_core");  // a netdev moved in is announced as added
  } else if (removed) {
    udev_.remove(event.ifindex);
  } else if (!moved_from.empty()) {
    udev_.moved(event.ifindex, moved_from);
  }
}

std::optional<UdevSim::Netdev> Kernel::describe_netdev(int ifindex) {
  std::lock_guard lock(mu_);
  auto it = netdev_owners_.find(ifindex);
  if (it == netdev_owners_.end()) {
    return std::nullopt;
  }
  auto net = net_of(it->second);
  return UdevSim::Netdev{"/" + net.dir + "/net/" + net.ifname, net.ifname};
}

std::string Kernel::read_link(int ifindex, const std::string& field) {
  if (field == "mtu") {
    // mtu_show() reads the netdev as it is (net-sysfs.c): asked of the kernel now, not
    // taken from what this host last heard (its link events come a while after).
    {
      std::lock_guard lock(mu_);
      if (!links_.contains(ifindex)) {
        return {};
      }
    }
    const auto now = netdevs_.get(ifindex);
    return now ? std::to_string(now.value().mtu) + "\n" : std::string();
  }
  std::lock_guard lock(mu_);
  auto it = links_.find(ifindex);
  if (it == links_.end()) {
    return {};
  }
  if (field == "uevent") {
    return "INTERFACE=" + it->second.name + "\nIFINDEX=" + std::to_string(ifindex) + "\n";
  }
  return (field == "mtu" ? std::to_string(it->second.mtu) : it->second.address) + "\n";
}

}  // namespace vfready::fakehost
