// SPDX-License-Identifier: Apache-2.0
#include "vfready/host/device_calls.hpp"

#include <linux/sockios.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <memory>
#include <string>
#include <utility>

#include "device_call_helper.hpp"
#include "helper_spawner.hpp"

namespace vfready::host {

namespace {

// Helpers kept for the next calls: as many as a pass makes at once (a PF's pass with
// its probe under way, 16 PFs and more), so that a bring-up spawns each once. With 16
// kept, a bring-up of 16 PFs forked some 75 helpers (each two forks of the daemon, and
// an exit).
// The service ends the idle ones after each pass (close_idle).
constexpr std::size_t kMaxIdle = 64;

std::string describe(std::span<const DeviceOp> ops) {
  std::string text;
  for (const auto& op : ops) {
    text += text.empty() ? "" : ", ";
    text += op.kind == DeviceOp::Kind::kWrite     ? "write " + op.value + " to " + op.path
            : op.kind == DeviceOp::Kind::kNetlink ? op.path
                                                  : "read of " + op.path;
    if (text.size() > 200) {
      return text + ", ...";
    }
  }
  return text;
}

// Waits until `fd` is readable or `until`; false at `until`.
bool wait_readable(int fd, Clock::time_point until) {
  while (true) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now());
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count())));
    if (n > 0) {
      return true;
    }
    if (n == 0 && Clock::now() >= until) {
      return false;
    }
  }
}

}  // namespace

DeviceCalls::~DeviceCalls() {
  if (spawner_ >= 0) {
    ::close(spawner_);  // it exits
  }
  for (const auto& h : idle_) {
    ::close(h.fd);
  }
  for (const auto& l : left_behind_) {
    ::close(l.helper.fd);  // the helper exits when its call returns
  }
  for (const int fd : {returns_, told_}) {
    if (fd >= 0) {
      ::close(fd);
    }
  }
}

DeviceCalls::Helper DeviceCalls::acquire(int* err) {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      const Helper h = idle_.back();
      idle_.pop_back();
      return h;
    }
  }
  return spawn(err);
}

bool DeviceCalls::start_spawner() {
  int err = 0;
  const int spawner = helper::start_spawner(&err);
  if (spawner < 0) {
    return false;
  }
  use_spawner(spawner);
  return true;
}

void DeviceCalls::use_spawner(int spawner) {
  std::lock_guard lock(mu_);
  replace_spawner_locked(spawner);
}

void DeviceCalls::replace_spawner_locked(int spawner) {
  if (spawner_ >= 0) {
    static_cast<void>(spawned_pid_locked(0));  // what it has told of its helpers is kept
    ::close(spawner_);  // it exits once it has forked the helpers it was asked for
  }
  spawner_ = spawner;
}

DeviceCalls::Helper DeviceCalls::spawn(int* err) {
  {
    std::lock_guard lock(mu_);  // one message at a time, and the descriptor kept meanwhile
    if (spawner_ >= 0) {
      static_cast<void>(spawned_pid_locked(0));  // what it said so far, taken out of its way
      const uint32_t serial = ++last_serial_ == 0 ? ++last_serial_ : last_serial_;
      const int fd = helper::spawn_through(spawner_, serial);
      if (fd >= 0) {
        return {fd, true, 0, serial};
      }
      // Gone: from here on, our own forks. Behind (EAGAIN), or short of memory or
      // descriptors for this one: this helper only.
      if (errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN || errno == EBADF) {
        replace_spawner_locked(-1);
      }
    }
  }
  int pid = 0;
  const int fd = helper::spawn(err, &pid);
  return {fd, false, pid, 0};
}

int DeviceCalls::spawned_pid_locked(uint32_t serial) {
  constexpr std::size_t kKept = 256;
  helper::Spawned told;
  while (spawner_ >= 0 && helper::take_spawned(spawner_, &told)) {
    spawned_.emplace_back(told.serial, told.pid);
  }
  if (spawned_.size() > kKept) {
    spawned_.erase(spawned_.begin(), spawned_.end() - kKept);
  }
  const auto it = std::find_if(spawned_.begin(), spawned_.end(),
                               [&](const auto& s) { return s.first == serial; });
  if (serial == 0 || it == spawned_.end()) {
    return 0;
  }
  const int pid = it->second;
  spawned_.erase(it);
  return pid > 0 ? pid : 0;
}

void DeviceCalls::close_idle() {
  std::vector<Helper> idle;
  {
    std::lock_guard lock(mu_);
    idle.swap(idle_);
  }
  for (const auto& h : idle) {
    ::close(h.fd);  // its recv answers 0: it exits
  }
}

void DeviceCalls::release(Helper helper) {
  std::lock_guard lock(mu_);
  if (idle_.size() < kMaxIdle) {
    // It has answered: it is there.
    // Its pid may not be told yet (the spawner tells it after its fork, and a helper can
    // answer before that): its serial is kept until it is.
    const int pid = helper.pid != 0 ? helper.pid : spawned_pid_locked(helper.serial);
    idle_.push_back({helper.fd, false, pid, pid == 0 ? helper.serial : 0});
  } else {
    ::close(helper.fd);
  }
}

static_assert(DeviceCalls::kMaxOps == helper::kBatch, "a started call is one message");

DeviceCalls::Pending& DeviceCalls::Pending::operator=(Pending&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) {
      ::close(fd_);
    }
    fd_ = std::exchange(other.fd_, -1);
    ops_ = other.ops_;
    device_ = std::move(other.device_);
    request_ = std::move(other.request_);
    deadline_ = other.deadline_;
    started_ = other.started_;
    until_ = other.until_;
    sent_ = other.sent_;
    from_spawner_ = other.from_spawner_;
    helper_pid_ = other.helper_pid_;
    serial_ = other.serial_;
  }
  return *this;
}

DeviceCalls::Pending::~Pending() {
  if (fd_ >= 0) {
    ::close(fd_);  // its helper sees the socket closed once its call returns, and exits
  }
}

DeviceCalls::Started DeviceCalls::start(const std::string& device, std::span<const DeviceOp> ops,
                                        std::chrono::milliseconds deadline,
                                        std::optional<std::string_view> root) {
  const auto now = Clock::now();
  return start_until(device, ops, deadline, now, now + deadline, root);
}

DeviceCalls::Started DeviceCalls::start_until(const std::string& device,
                                              std::span<const DeviceOp> ops,
                                              std::chrono::milliseconds deadline,
                                              Clock::time_point started, Clock::time_point until,
                                              std::optional<std::string_view> root) {
  Started out;
  if (ops.empty() || ops.size() > kMaxOps) {
    out.answer.push_back({EINVAL, {}});
    return out;
  }
  {
    std::lock_guard lock(mu_);
    reap_locked();
    if (std::any_of(left_behind_.begin(), left_behind_.end(),
                    [&](const LeftBehind& l) { return l.call.device == device; })) {
      out.answer.push_back({kStuck, {}});
      return out;
    }
  }
  auto request = helper::encode(ops, root);
  Helper h;
  // An idle helper killed meanwhile takes no request (EPIPE): nothing was called. The
  // idle ones went with it, most likely: they are let go, and new helpers are made, two
  // at most; past that the call is one whose helper is gone (its PF brought up again).
  for (int spawned = 0;;) {
    int err = 0;
    const bool fresh = [&] {
      std::lock_guard lock(mu_);
      return idle_.empty();
    }();
    h = acquire(&err);
    if (h.fd < 0) {
      out.answer.push_back({err, {}});
      return out;
    }
    if (::send(h.fd, request.data(), request.size(), MSG_NOSIGNAL) >= 0) {
      break;
    }
    const int sent = errno;
    ::close(h.fd);
    if (sent != EPIPE && sent != ECONNRESET) {
      out.answer.push_back({sent, {}});
      return out;
    }
    if (!fresh) {
      close_idle();
    } else if (++spawned == 2) {
      out.answer.push_back({kHelperGone, {}});
      std::lock_guard lock(mu_);
      returned_.push_back(
          {{device, describe(helper::decode_request(request)), deadline, started, false},
           kHelperGone});
      tell_returned_locked();
      return out;
    }
  }
  Pending p;
  p.fd_ = h.fd;
  p.ops_ = ops.size();
  p.device_ = device;
  p.request_ = std::move(request);
  p.deadline_ = deadline;
  p.started_ = started;
  p.until_ = until;
  p.sent_ = Clock::now();
  p.from_spawner_ = h.from_spawner;
  p.helper_pid_ = h.pid;
  p.serial_ = h.serial;
  out.pending = std::move(p);
  return out;
}

namespace {

// Where a call's answer is read: the calling thread's, kept from call to call. The room
// for a whole batch is some 57 KiB, where most answers are a few dozen bytes: made and
// freed for each call, it cost more than the rest of finish().
char* answer_room(std::size_t room) {
  thread_local std::vector<char> buffer;
  if (buffer.size() < room) {
    buffer.resize(room);
  }
  return buffer.data();
}

}  // namespace

std::vector<DeviceOpResult> DeviceCalls::finish(Pending call) {
  std::vector<DeviceOpResult> results;
  pollfd p{call.fd_, POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) {
    // Not answered by its deadline (or asked too early: the same to the caller). A
    // request to a helper just asked of the spawner, still unread in the socket
    // (SIOCOUTQ: what the peer has not taken) after half the deadline, was never taken
    // up: the spawner made no helper (stopped, say), and is asked for no more. (A
    // request sent just before the deadline, the last batch of run(), is not judged.)
    int unread = 0;
    const bool untaken = call.from_spawner_ && Clock::now() - call.sent_ >= call.deadline_ / 2 &&
                         ::ioctl(call.fd_, SIOCOUTQ, &unread) == 0 && unread > 0;
    std::lock_guard lock(mu_);
    if (untaken) {
      replace_spawner_locked(-1);
    }
    StuckCall stuck{call.device_, describe(helper::decode_request(call.request_)), call.deadline_,
                    call.started_, untaken};
    stuck.helper_pid = call.helper_pid_ != 0 ? call.helper_pid_ : spawned_pid_locked(call.serial_);
    leave_behind_locked({std::exchange(call.fd_, -1)}, std::move(stuck));
    results.push_back({kStuck, {}});
    return results;
  }
  const auto room = helper::max_answer();
  char* const answer = answer_room(room);
  const ssize_t n = ::recv(call.fd_, answer, room, MSG_DONTWAIT);
  if (n <= 0 || !helper::decode(answer, static_cast<std::size_t>(n), &results)) {
    // The helper died (killed?): whatever it did is read back by the pass that brings
    // its PF up again, as after a stuck call that returned.
    results.clear();
    results.push_back({kHelperGone, {}});
    std::lock_guard lock(mu_);
    returned_.push_back({{call.device_, describe(helper::decode_request(call.request_)),
                          call.deadline_, call.started_, false},
                         kHelperGone});
    tell_returned_locked();
    return results;  // its socket closes with `call`
  }
  release({std::exchange(call.fd_, -1), false, call.helper_pid_, call.serial_});
  return results;
}

std::vector<DeviceOpResult> DeviceCalls::run(const std::string& device,
                                             std::span<const DeviceOp> ops,
                                             std::chrono::milliseconds deadline,
                                             std::optional<std::string_view> root) {
  std::vector<DeviceOpResult> results;
  const auto started = Clock::now();
  const auto until = started + deadline;
  for (std::size_t at = 0; at < ops.size(); at += kMaxOps) {
    const auto batch = ops.subspan(at, std::min(kMaxOps, ops.size() - at));
    auto call = start_until(device, batch, deadline, started, until, root);
    if (!call.pending) {
      results.insert(results.end(), call.answer.begin(), call.answer.end());
      return results;
    }
    static_cast<void>(wait_readable(call.pending->fd(), until));  // finish() tells
    auto got = finish(std::move(*call.pending));
    const bool all = got.size() == batch.size() && got.back().err != kStuck;
    results.insert(results.end(), std::make_move_iterator(got.begin()),
                   std::make_move_iterator(got.end()));
    if (!all) {
      break;  // a write failed (the calls after it were not made), or the device is stuck
    }
  }
  return results;
}

}  // namespace vfready::host
