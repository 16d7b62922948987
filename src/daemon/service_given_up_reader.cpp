// SPDX-License-Identifier: Apache-2.0
// A host reader its pass gave up on (it read nothing more for its bound): watched until
// it ends, so that a call it left behind is still the daemon's, and no second reader
// meets the read that holds it.
#include <poll.h>

#include "log.hpp"
#include "service.hpp"

namespace vfready::daemon {

void Service::keep_given_up_reader() {
  auto reader = bringup_->take_given_up_reader();
  if (!reader || options_.once || given_up_reader_) {
    return;  // --once ends with its pass; while one is kept, no pass reads
  }
  given_up_reader_ = std::move(reader);
  given_up_reader_lost_told_ = false;
  try {
    given_up_reader_id_ = loop_.add_fd(given_up_reader_->fd(), POLLIN, [this](short) {
      const bool ended = given_up_reader_->drain();
      if (given_up_reader_->lost_a_call() && !given_up_reader_lost_told_) {
        given_up_reader_lost_told_ = true;
        log::warn({},
                  "a call the host's reader left behind could not be handed over (vfreadyd "
                  "is out of descriptors): its device is stuck unknown to vfreadyd");
      }
      if (ended) {
        on_given_up_reader_ended();
      } else {
        watch_returns();  // a call it handed over: its return is heard
      }
    });
  } catch (const std::exception& e) {
    // Not watched: it is let go (it exits when it next tells us), and passes go on.
    log::warn({}, std::string("cannot watch the host's reader left behind: ") + e.what());
    given_up_reader_.reset();
  }
}

bool Service::wait_for_given_up_reader_at_boot() {
  if (!given_up_reader_) {
    return false;
  }
  // A restart would meet the same read, and leave one more reader in the kernel.
  log::error({},
             "not ready: the host's read has not returned (its reader, vfready-read, "
             "waits in the kernel); the host is read again once it has, and READY=1 "
             "follows");
  return true;
}

void Service::on_given_up_reader_ended() {
  loop_.remove(given_up_reader_id_);
  given_up_reader_id_ = 0;
  given_up_reader_.reset();
  watch_returns();
  log::info({}, "the host's reader left behind has ended: reading the host again");
  reconcile();  // every PF: the pass that gave up on it planned none
}

}  // namespace vfready::daemon
