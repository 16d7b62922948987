// SPDX-License-Identifier: Apache-2.0
#include "event_loop.hpp"

#include <poll.h>

#include <cerrno>
#include <system_error>
#include <vector>

namespace vfready::daemon {

namespace {

class FdSource final : public EventSource {
 public:
  FdSource(int fd, short events, std::function<void(short)> f)
      : fd_(fd), events_(events), f_(std::move(f)) {}
  PollSpec prepare() override { return {fd_, events_, std::nullopt}; }
  void dispatch(short revents) override { f_(revents); }

 private:
  int fd_;
  short events_;
  std::function<void(short)> f_;
};

class TimerSource final : public EventSource {
 public:
  TimerSource(Clock::time_point when, std::function<void()> f) : when_(when), f_(std::move(f)) {}
  PollSpec prepare() override {
    return {-1, 0, fired_ ? std::nullopt : std::optional<Clock::time_point>(when_)};
  }
  void dispatch(short /*revents*/) override {
    if (!fired_) {
      fired_ = true;
      f_();
    }
  }
  [[nodiscard]] bool fired() const { return fired_; }

 private:
  Clock::time_point when_;
  std::function<void()> f_;
  bool fired_ = false;
};

}  // namespace

EventLoop::Id EventLoop::add(std::shared_ptr<EventSource> source) {
  sources_[next_] = std::move(source);
  return next_++;
}

void EventLoop::remove(Id id) { sources_.erase(id); }

EventLoop::Id EventLoop::add_fd(int fd, short events, std::function<void(short)> on_ready) {
  return add(std::make_shared<FdSource>(fd, events, std::move(on_ready)));
}

EventLoop::Id EventLoop::add_timer(Clock::time_point when, std::function<void()> on_time) {
  auto timer = std::make_shared<TimerSource>(when, std::move(on_time));
  const Id id = add(timer);
  // A fired timer removes itself: the loop erases sources only between dispatches.
  return id;
}

int EventLoop::run() {
  std::vector<pollfd> fds;
  std::vector<std::pair<Id, std::shared_ptr<EventSource>>> round;
  std::vector<std::optional<Clock::time_point>> deadlines;
  std::vector<int> slot;  // index into fds, or -1
  while (!quit_) {
    fds.clear();
    round.assign(sources_.begin(), sources_.end());
    deadlines.clear();
    slot.clear();
    std::optional<Clock::time_point> nearest;
    for (auto& [id, source] : round) {
      const auto spec = source->prepare();
      slot.push_back(spec.fd >= 0 ? static_cast<int>(fds.size()) : -1);
      if (spec.fd >= 0) {
        fds.push_back({spec.fd, spec.events, 0});
      }
      deadlines.push_back(spec.deadline);
      if (spec.deadline && (!nearest || *spec.deadline < *nearest)) {
        nearest = spec.deadline;
      }
    }
    int timeout = -1;
    if (nearest) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(*nearest - Clock::now());
      timeout = static_cast<int>(std::max<int64_t>(0, left.count()));
    }
    if (poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) {
      throw std::system_error(errno, std::generic_category(), "poll");
    }
    ++turns_;
    const auto now = Clock::now();
    for (std::size_t i = 0; i < round.size() && !quit_; ++i) {
      auto& [id, source] = round[i];
      if (!sources_.contains(id)) {
        continue;  // removed by an earlier dispatch of this round
      }
      const short revents =
          slot[i] >= 0 ? fds[static_cast<std::size_t>(slot[i])].revents : short{0};
      if (revents != 0 || (deadlines[i] && *deadlines[i] <= now)) {
        source->dispatch(revents);
      }
      if (auto* timer = dynamic_cast<TimerSource*>(source.get());
          timer != nullptr && timer->fired()) {
        sources_.erase(id);
      }
    }
  }
  return *quit_;
}

}  // namespace vfready::daemon
