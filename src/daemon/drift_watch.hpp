// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "drift.hpp"
#include "event_loop.hpp"
#include "host_access.hpp"
#include "vfready/host/links.hpp"
#include "vfready/host/udev.hpp"
#include "vfready/model/status.hpp"

// Watches link events (netlink) and udev's netdev events (libudev), and judges each
// against the status and the link as it is now: drift of a configured PF, or nothing.
// Runs on the loop; reads the status, never changes it.
namespace vfready::daemon {

class DriftWatch {
 public:
  // Judges an event again later (against a pass's outcome).
  using Judge = std::function<std::optional<Drift>()>;
  struct Hooks {
    // Drift of one PF (a link event), and how to judge the same event again.
    std::function<void(const Drift&, const Judge&)> drift;
    // A netdev udev has just announced (or, when udev is not heard, a link event shows),
    // not judged yet: judging it reads sysfs, which the caller may put off (while a pass
    // runs, most are the pass's own).
    std::function<void(const Judge&)> netdev;
    // Events were lost (a buffer overran): every PF needs a look.
    std::function<void()> lost;
    // A batch of events has been judged.
    std::function<void()> judged;
  };

  DriftWatch(EventLoop& loop, const model::DaemonStatus& status, Hooks hooks);
  ~DriftWatch();
  DriftWatch(const DriftWatch&) = delete;
  DriftWatch& operator=(const DriftWatch&) = delete;

  // Subscribes to link events (`open` makes what they are read through); `udev` is the
  // daemon's udev reader (null when libudev could not make one), whose adds the loop
  // hands to on_udev_adds(). Call before the bring-up reads anything, so that nothing
  // changes unseen. Link events that cannot be had are logged and left out.
  void start(const std::function<std::unique_ptr<DriftReads>()>& open,
             std::shared_ptr<host::UdevEventReader> udev);
  // udev's adds of a batch the loop read (`overflowed`: events were lost before it).
  void on_udev_adds(const std::vector<int>& added, bool overflowed);

  // While one lives, judges share one index of the status's netdevs, made at the first
  // judge: for many judged at once (the events of a pass, judged at its end), against a
  // status none of them changes (nothing a hook does changes its PFs or VFs). Without
  // one each judge walks the status (cheaper for the few of a batch of link events).
  class Batch {
   public:
    explicit Batch(DriftWatch& watch) : watch_(watch) { ++watch_.batches_; }
    ~Batch() {
      if (--watch_.batches_ == 0) {
        watch_.index_.reset();
      }
    }
    Batch(const Batch&) = delete;
    Batch& operator=(const Batch&) = delete;

   private:
    DriftWatch& watch_;
  };

 private:
  // The batch's index, made now if it has none yet; null outside a batch.
  const NetdevIndex* index();
  void on_link_events();
  // Each event's altnames_gone, from the altnames earlier events of its link showed.
  void note_altnames_gone(std::vector<host::LinkEvent>& events);
  std::optional<Drift> judge_link_event(const host::LinkEvent& event);
  std::optional<Drift> judge_new_netdev(int ifindex);

  EventLoop& loop_;
  const model::DaemonStatus& status_;
  Hooks hooks_;
  std::unique_ptr<DriftReads> reads_;  // null when link events could not be had
  std::shared_ptr<host::UdevEventReader> udev_;
  // Netdevs judged as new from a link event (udev not heard), until they go.
  std::set<int> judged_from_links_;
  // The altnames each link's last event showed (until it goes), by ifindex in order, as
  // host::altname_key(): what a later event can show deleted. 16 bytes an altname.
  std::vector<std::pair<int, uint64_t>> altnames_seen_;
  // A batch's events in order of their link (on_link_events), and whether each is its
  // link's last: kept between batches, so that a batch takes no memory of its own.
  std::vector<std::size_t> order_;
  std::vector<bool> last_;
  int batches_ = 0;                   // Batches alive
  std::optional<NetdevIndex> index_;  // while one is
};

}  // namespace vfready::daemon
