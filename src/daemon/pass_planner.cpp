// SPDX-License-Identifier: Apache-2.0
#include "pass_planner.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

#include "vfready/host/errno_name.hpp"
#include "vfready/model/checks.hpp"
#include "vfready/model/host_info_bytes.hpp"

namespace vfready::daemon {

namespace {

// The records of the worker: 'w' what it waits for, 's' a call it left behind (its
// helper's socket with it), then 'h' the host as read, or 'e' why it could not be.
// In the worker: reads the host and tells it.
void read_and_tell(const BringupInputs& in, int socket) {
  in.calls->forked();
  std::string failed;
  std::string host;
  try {
    host = model::encode_host(in.hosts->read_host(
        in, [socket](const std::string& waiting) { host::send_record(socket, 'w', waiting); }));
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

PassPlanner::PassPlanner(const BringupInputs& in) : in_(in) {
  int err = 0;
  fd_ = host::fork_worker(&err, "vfready-read", [&in](int socket) { read_and_tell(in, socket); });
  if (fd_ < 0) {
    fail(model::problem(
        model::EventKind::kHostReadFailed,
        "starting the host's reader (vfready-read) failed: " + host::errno_name(err)));
  }
}

PassPlanner::PassPlanner(const BringupInputs& in, model::Problem problem) : in_(in) {
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

std::vector<PassMessage> PassPlanner::take() {
  std::vector<PassMessage> out;
  if (ended_) {
    return out;
  }
  if (failed_) {
    out.push_back(std::move(*failed_));
  } else {
    for (auto& r : records_.read(fd_)) {
      if (r.kind == 'w') {
        out.push_back({.kind = PassMessage::Kind::kWaiting, .step = std::move(r.bytes)});
      } else if (auto call =
                     r.kind == 's' && r.fd >= 0 ? host::decode_stuck(r.bytes) : std::nullopt) {
        in_.calls->adopt({r.fd, std::move(*call)});
      } else if (r.kind == 'h') {
        auto host = model::decode_host(r.bytes);
        out.push_back(
            host ? plan_pass(in_, std::make_shared<const model::HostInfo>(std::move(host).value()))
                 : stopped(model::EventKind::kHostReadFailed,
                           "reading the host failed: " + host.error().message));
      } else if (r.kind == 'e') {
        out.push_back(
            stopped(model::EventKind::kHostReadFailed, "reading the host failed: " + r.bytes));
      } else if (r.fd >= 0) {
        ::close(r.fd);  // not a record of ours
      }
    }
    if (records_.ended() && (out.empty() || out.back().kind == PassMessage::Kind::kWaiting)) {
      out.push_back(stopped(model::EventKind::kHostReadFailed,
                            "reading the host failed: its reader (vfready-read) ended without "
                            "an answer"));
    }
  }
  ended_ = ended_ || (!out.empty() && out.back().kind != PassMessage::Kind::kWaiting);
  return out;
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
