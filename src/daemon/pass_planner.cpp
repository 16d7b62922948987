// SPDX-License-Identifier: Apache-2.0
#include "pass_planner.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <thread>
#include <utility>

#include "vfready/model/checks.hpp"

namespace vfready::daemon {

PassChannel::PassChannel() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (fd_ < 0) {
    throw std::system_error(errno, std::generic_category(), "eventfd");
  }
}

PassChannel::~PassChannel() { close(fd_); }

void PassChannel::post(PassMessage m) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(m));
  }
  const uint64_t one = 1;
  static_cast<void>(write(fd_, &one, sizeof one));
}

std::deque<PassMessage> PassChannel::take() {
  uint64_t count = 0;
  static_cast<void>(read(fd_, &count, sizeof count));
  std::deque<PassMessage> out;
  std::lock_guard lock(mu_);
  out.swap(queue_);
  return out;
}

void start_planner(std::shared_ptr<PassChannel> channel, BringupInputs in) {
  // Reading sysfs can block (a driver holding its device lock): not on the loop.
  std::thread([channel = std::move(channel), in = std::move(in)] {
    PassMessage m;
    try {
      auto host =
          std::make_shared<const model::HostInfo>(in.hosts->read_host(in, [&](std::string waiting) {
            channel->post({.kind = PassMessage::Kind::kWaiting, .step = std::move(waiting)});
          }));
      auto plan = model::make_plan(in.config, *host);
      if (!plan) {
        m.kind = PassMessage::Kind::kStopped;
        m.problems.push_back(
            model::problem(model::EventKind::kConfigInvalid, plan.error().message));
      } else {
        const auto driver = model::check_driver(in.config, in.table, *host);
        m.kind = driver.ok() ? PassMessage::Kind::kPlanned : PassMessage::Kind::kStopped;
        m.problems = driver.failures;
        // No PF is judged: what the kernel log says of each is the node's to show.
        for (const auto& pf : driver.ok() ? std::vector<model::PfTarget>{} : plan->pfs) {
          for (auto& p : model::log_lines_of_pf(pf, *host)) {
            m.problems.push_back(std::move(p));
          }
        }
        if (!driver.ok()) {
          for (auto& p :
               model::failed_probes_elsewhere(in.config.required_modules, plan->pfs, *host)) {
            m.problems.push_back(std::move(p));
          }
        }
        m.warnings = driver.warnings;
        m.warnings.insert(m.warnings.end(), plan->warnings.begin(), plan->warnings.end());
        m.targets = std::move(plan).value().pfs;  // the plan is done with
        m.host = host;
      }
    } catch (const std::exception& e) {
      m.kind = PassMessage::Kind::kStopped;
      m.problems.push_back(model::problem(model::EventKind::kHostReadFailed,
                                          std::string("reading the host failed: ") + e.what()));
    }
    channel->post(std::move(m));
  }).detach();
}

}  // namespace vfready::daemon
