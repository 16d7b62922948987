// SPDX-License-Identifier: Apache-2.0
#include "pass_planner.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <system_error>
#include <utility>

#include "vfready/host/errno_name.hpp"
#include "vfready/model/checks.hpp"
#include "vfready/model/host_info_bytes.hpp"

namespace vfready::daemon {

namespace {

// The records of the worker: 'w' what it waits for, 'p' a function read, 's' a call it
// left behind (its helper's socket with it), then 'h' the host as read, or 'e' why it
// could not be.
constexpr auto kProgressEvery = std::chrono::milliseconds(250);

void tell(int socket, char kind, std::string_view bytes) {
  if (!host::send_record(socket, kind, bytes) && (errno == EPIPE || errno == ECONNRESET)) {
    ::_exit(0);  // the daemon no longer listens: nothing it read would be told
  }
}

// In the worker: reads the host and tells it.
void read_and_tell(const BringupInputs& in, int socket) {
  in.calls->forked();
  std::string failed;
  std::string host;
  try {
    // A function read is told at most every kProgressEvery (a VF is one too: 2,032 of
    // them would be as many messages), far within the bound the loop holds it to.
    std::atomic<Clock::rep> told_at{0};
    HostAccess::ReadProgress progress{
        .waiting = [socket](const std::string& waiting) { tell(socket, 'w', waiting); },
        .read_one =
            [socket, &told_at] {
              const auto now = Clock::now().time_since_epoch().count();
              auto last = told_at.load();
              const auto every = std::chrono::duration_cast<Clock::duration>(kProgressEvery);
              if (now - last >= every.count() && told_at.compare_exchange_strong(last, now)) {
                tell(socket, 'p', {});
              }
            }};
    auto read = in.host_access->read_host(in, progress);
    tell(socket, 'p', {});  // read: its bytes (the kernel log, some MiB) are made and sent
    host = model::encode_host(read);
  } catch (const std::exception& e) {
    failed = e.what();
  }
  for (auto& handed : in.calls->hand_over()) {
    host::send_record(socket, 's', host::encode_stuck(handed.call), handed.fd);
    ::close(handed.fd);
  }
  static_cast<void>(failed.empty() ? host::send_record(socket, 'h', host)
                                   : host::send_record(socket, 'e', failed));
}

}  // namespace

std::chrono::milliseconds host_read_quiet_bound(const model::Config& config) {
  return std::max(std::chrono::milliseconds(config.timeouts.device_call_ms) * 3,
                  std::chrono::milliseconds(5000));
}

PassPlanner::PassPlanner(const BringupInputs& in)
    : in_(&in), calls_(in.calls), until_(Clock::now() + host_read_quiet_bound(in.config)) {
  int err = 0;
  fd_ = host::fork_worker(&err, "vfready-read", [&in](int socket) { read_and_tell(in, socket); });
  if (fd_ < 0) {
    fail(model::problem(
        model::EventKind::kHostReadFailed,
        "starting the host's reader (vfready-read) failed: " + host::errno_name(err)));
  }
}

PassPlanner::PassPlanner(const BringupInputs& in, model::Problem problem)
    : in_(&in), calls_(in.calls), until_(Clock::time_point::max()) {
  fail(std::move(problem));
}

void PassPlanner::fail(model::Problem problem) {
  fd_ = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK);  // readable: take() tells it
  if (fd_ < 0) {
    throw std::system_error(errno, std::generic_category(), "eventfd");
  }
  failed_ = PassMessage{.kind = PassMessage::Kind::kStopped};
  failed_->problems.push_back(std::move(problem));
}

PassPlanner::~PassPlanner() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

PassMessage PassPlanner::stopped(model::EventKind kind, std::string text) {
  PassMessage m{.kind = PassMessage::Kind::kStopped};
  m.problems.push_back(model::problem(kind, std::move(text)));
  return m;
}

std::optional<PassMessage> PassPlanner::told(host::Record& r) {
  if (r.kind != 's' && r.fd >= 0) {
    ::close(std::exchange(r.fd, -1));  // only a call left behind comes with one
  }
  if (r.kind == 'w') {
    // It waits for the modules that long, then reads.
    until_ = Clock::now() + host_read_quiet_bound(in_->config) +
             std::chrono::milliseconds(in_->config.timeouts.modules_ms);
    return PassMessage{.kind = PassMessage::Kind::kWaiting, .step = std::move(r.bytes)};
  }
  if (r.kind == 'p') {
    until_ = Clock::now() + host_read_quiet_bound(in_->config);  // read on: its wait is over
    return std::nullopt;
  }
  if (r.kind == 's') {
    adopt(r);
    return std::nullopt;
  }
  if (r.kind == 'h') {
    auto host = model::decode_host(r.bytes);
    if (!host) {
      return stopped(model::EventKind::kHostReadFailed,
                     "reading the host failed: " + host.error().message);
    }
    return plan_pass(*in_, std::make_shared<const model::HostInfo>(std::move(host).value()));
  }
  if (r.kind == 'e') {
    return stopped(model::EventKind::kHostReadFailed, "reading the host failed: " + r.bytes);
  }
  return std::nullopt;  // no record of ours
}

std::vector<PassMessage> PassPlanner::take() {
  std::vector<PassMessage> out;
  if (ended_) {
    return out;
  }
  if (failed_) {
    out.push_back(std::move(*failed_));
    ended_ = true;
    return out;
  }
  const auto before = records_.messages();
  auto records = records_.read(fd_);
  if (records_.messages() != before) {
    until_ = Clock::now() + host_read_quiet_bound(in_->config);  // it went on
  }
  for (auto& r : records) {
    if (auto m = told(r)) {
      out.push_back(std::move(*m));
    }
  }
  const auto is_end = [](const PassMessage& m) { return m.kind != PassMessage::Kind::kWaiting; };
  if (records_.lost_a_descriptor()) {
    // A call left behind whose helper's socket did not come: its device would be called
    // again while the call waits. Nothing is planned on such a read.
    std::erase_if(out, is_end);
    out.push_back(stopped(model::EventKind::kHostReadFailed,
                          "reading the host failed: a call the host's reader left behind "
                          "could not be handed over (vfreadyd is out of descriptors)"));
  } else if (records_.ended() && std::none_of(out.begin(), out.end(), is_end)) {
    out.push_back(stopped(model::EventKind::kHostReadFailed,
                          "reading the host failed: its reader (vfready-read) ended without "
                          "an answer"));
  } else if (Clock::now() >= until_ && std::none_of(out.begin(), out.end(), is_end)) {
    // A read of sysfs that does not return (device calls are bounded, and left behind at
    // their bound). The reader is left to it; what it hands over meanwhile is drain()'s.
    given_up_ = true;
    out.push_back(stopped(
        model::EventKind::kHostReadFailed,
        "reading the host failed: its reader (vfready-read) read nothing more for " +
            std::to_string(host_read_quiet_bound(in_->config).count()) +
            " ms (a read of sysfs that does not return, in the kernel or a driver); the pass "
            "stops, and the host is read again once that reader has ended"));
  }
  ended_ = std::any_of(out.begin(), out.end(), is_end);
  return out;
}

void PassPlanner::adopt(host::Record& r) {
  auto call = r.fd >= 0 ? host::decode_stuck(r.bytes) : std::nullopt;
  if (call) {
    calls_->adopt({std::exchange(r.fd, -1), std::move(*call)});  // its device stuck here
  } else if (r.fd >= 0) {
    ::close(std::exchange(r.fd, -1));  // not a call left behind, as it should be
  }
}

bool PassPlanner::drain() {
  for (auto& r : records_.read(fd_)) {
    if (r.kind == 's') {
      adopt(r);
    } else if (r.fd >= 0) {
      ::close(r.fd);
    }
  }
  return records_.ended();
}

PassMessage plan_pass(const BringupInputs& in, std::shared_ptr<const model::HostInfo> host) {
  PassMessage m;
  auto plan = model::make_plan(in.config, *host);
  if (!plan) {
    m.kind = PassMessage::Kind::kStopped;
    m.problems.push_back(model::problem(model::EventKind::kConfigInvalid, plan.error().message));
    return m;
  }
  const auto driver = model::check_driver(in.config, in.table, *host);
  m.kind = driver.ok() ? PassMessage::Kind::kPlanned : PassMessage::Kind::kStopped;
  m.problems = driver.failures;
  if (!driver.ok()) {
    // No PF is judged: what the kernel log says of each is the node's to show.
    for (const auto& pf : plan->pfs) {
      for (auto& p : model::log_lines_of_pf(pf, *host)) {
        m.problems.push_back(std::move(p));
      }
    }
    for (auto& p : model::failed_probes_elsewhere(in.config.required_modules, plan->pfs, *host)) {
      m.problems.push_back(std::move(p));
    }
  }
  m.warnings = driver.warnings;
  m.warnings.insert(m.warnings.end(), plan->warnings.begin(), plan->warnings.end());
  m.targets = std::move(plan).value().pfs;  // the plan is done with
  m.host = std::move(host);
  return m;
}

}  // namespace vfready::daemon
