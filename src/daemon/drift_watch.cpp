// SPDX-License-Identifier: Apache-2.0
#include "drift_watch.hpp"

#include <poll.h>

#include <algorithm>
#include <numeric>

#include "log.hpp"

namespace vfready::daemon {

DriftWatch::DriftWatch(EventLoop& loop, const model::DaemonStatus& status, Hooks hooks)
    : loop_(loop), status_(status), hooks_(std::move(hooks)) {}

DriftWatch::~DriftWatch() = default;

void DriftWatch::start(const std::function<std::unique_ptr<DriftReads>()>& open,
                       std::shared_ptr<host::UdevEventReader> udev) {
  try {
    reads_ = open();
    loop_.add_fd(reads_->events().fd(), POLLIN, [this](short) { on_link_events(); });
  } catch (const std::exception& e) {
    log::warn({}, std::string(e.what()) + ": drift of names goes unseen until a reconcile");
  }
  udev_ = std::move(udev);
}

void DriftWatch::on_link_events() {
  bool overflowed = false;
  auto events = reads_->events().drain(&overflowed);
  if (overflowed) {
    altnames_seen_.clear();  // what was lost may have removed links, or shown altnames
    log::warn({}, "link events were lost (netlink buffer overrun): looking at every PF");
    hooks_.lost();
  }
  note_altnames_gone(events);
  // Without udev's events (udevd started after vfreadyd, or the monitor failed) a new
  // netdev is seen in its link event: a VF a driver reload re-creates is repaired all the
  // same. (With them, udev's add says when the netdev is ready to be judged.) Each is
  // judged once, at its first batch, until it goes: the link events of one a pass left
  // alone (an IPoIB child of a PF) do not start a pass each.
  const bool new_from_links = !udev_ || !udev_->hearing();
  // A link is judged by what it is now, so once a batch, at its last event: the earlier
  // ones (a pass's MTU change under the kernel's name, then its rename) would each be
  // judged against the same link and tell one drift many times.
  // (The events by ifindex, then by order: the last of each run is its link's last.)
  auto& order = order_;
  order.resize(events.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return events[a].ifindex < events[b].ifindex;
  });
  auto& last = last_;
  last.assign(events.size(), false);
  for (std::size_t k = 0; k < order.size(); ++k) {
    last[order[k]] =
        k + 1 == order.size() || events[order[k + 1]].ifindex != events[order[k]].ifindex;
  }
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    if (e.removed) {
      judged_from_links_.erase(e.ifindex);
    }
    if (!last[i]) {
      continue;
    }
    if (auto drift = judge_link_event(e)) {
      // Judged again at a pass's end with the altnames it saw gone: a deletion that
      // pass may have repaired costs one more pass, not one left unrepaired.
      hooks_.drift(*drift, [this, e] { return judge_link_event(e); });
    } else if (new_from_links && !e.removed && !knows_netdev(status_, index(), e.ifindex) &&
               judged_from_links_.insert(e.ifindex).second) {
      hooks_.netdev([this, ifindex = e.ifindex] { return judge_new_netdev(ifindex); });
    }
  }
  hooks_.judged();
}

void DriftWatch::note_altnames_gone(std::vector<host::LinkEvent>& events) {
  // Per link, over the batch in order: an altname deleted and added back within it is
  // not gone. Only links that lost some get an entry: most events lose nothing.
  std::map<int, std::vector<uint64_t>> gone;
  auto& seen = altnames_seen_;
  const auto by_link = [](const auto& a, const auto& b) { return a.first < b.first; };
  for (auto& e : events) {
    const auto [from, to] =
        std::equal_range(seen.begin(), seen.end(), std::pair<int, uint64_t>{e.ifindex, 0}, by_link);
    const auto had = gone.find(e.ifindex);
    std::vector<uint64_t> lost = had == gone.end() ? std::vector<uint64_t>{} : had->second;
    if (e.removed) {
      seen.erase(from, to);
      if (had != gone.end()) {
        gone.erase(had);
      }
      continue;
    }
    if (e.altnames) {
      std::vector<uint64_t> now;
      now.reserve(e.altnames->size());
      for (const auto& a : *e.altnames) {
        now.push_back(host::altname_key(a));
      }
      const auto in_now = [&](uint64_t k) {
        return std::find(now.begin(), now.end(), k) != now.end();
      };
      for (auto it = from; it != to; ++it) {
        if (!in_now(it->second)) {
          lost.push_back(it->second);
        }
      }
      std::erase_if(lost, in_now);
      // The link's entries become these (new links come last: an insert at the end).
      auto at = seen.erase(from, to);
      for (const auto k : now) {
        at = std::next(seen.insert(at, {e.ifindex, k}));
      }
    }
    if (!lost.empty() || had != gone.end()) {
      gone[e.ifindex] = lost;
    }
    e.altnames_gone = std::move(lost);
  }
}

const NetdevIndex* DriftWatch::index() {
  if (batches_ > 0 && !index_) {
    index_.emplace(status_);
  }
  return batches_ > 0 ? &*index_ : nullptr;
}

std::optional<Drift> DriftWatch::judge_link_event(const host::LinkEvent& event) {
  auto drift = drift_of(status_, index(), event);
  if (drift) {
    // Events are read some time after they happen: judge by what the link is now,
    // not by a name it had on its way (a pass's own rename read after the pass ended).
    auto now = event;
    const auto name = reads_->link_name(event.ifindex);
    now.removed = !name;
    now.name = name.value_or(event.name);
    // From sysfs, which answers without rtnl_lock and, for a name gone meanwhile, ENOENT
    // (SIOCGIFMTU would have the kernel look for a module of that name). 0: not judged on it.
    now.mtu = name ? reads_->netdev_mtu(*name).value_or(0) : 0;
    drift = drift_of(status_, index(), now);
  }
  return drift;
}

void DriftWatch::on_udev_adds(const std::vector<int>& added, bool overflowed) {
  if (overflowed) {
    log::warn({}, "udev events were lost (monitor buffer overrun): looking at every PF");
    hooks_.lost();
  }
  for (const int ifindex : added) {
    // A new netdev is what a link event cannot tell apart from the pass's own; renames
    // and removals of known netdevs are judged from link events.
    hooks_.netdev([this, ifindex] { return judge_new_netdev(ifindex); });
  }
  hooks_.judged();
}

std::optional<Drift> DriftWatch::judge_new_netdev(int ifindex) {
  if (knows_netdev(status_, index(), ifindex)) {
    return std::nullopt;  // named by vfready already: no need to look further
  }
  const auto name = reads_ ? reads_->link_name(ifindex) : std::nullopt;
  if (!name) {
    return std::nullopt;  // gone again, or not in this namespace
  }
  const auto device = reads_->device_of_netdev(*name);
  if (!device.pci) {
    return std::nullopt;  // a virtual device (veth, bridge): not ours
  }
  return drift_of_new_netdev(status_, ifindex, *name, *device.pci, device.physfn.value_or(""));
}

}  // namespace vfready::daemon
