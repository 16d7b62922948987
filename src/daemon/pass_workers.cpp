// SPDX-License-Identifier: Apache-2.0
#include "pass_workers.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <thread>

#include "vfready/host/host_reader.hpp"
#include "vfready/host/links.hpp"
#include "vfready/host/sysfs.hpp"
#include "vfready/host/sysfs_sriov_host.hpp"
#include "vfready/host/udev.hpp"
#include "vfready/model/checks.hpp"
#include "vfready/pipeline/pf_bringup.hpp"

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

namespace {

std::chrono::milliseconds device_call_bound(const model::Config& config) {
  return std::chrono::milliseconds(config.timeouts.device_call_ms);
}

// Required modules may still be loading when vfreadyd starts (openibd, rdma-hw.target, a
// driver container): waits for them, up to timeouts.modules_ms, unless the kernel log
// already shows one failed to load (it does not fit the kernel): then at once. sysfs has
// no event for a module's arrival, so this looks every 100 ms, on the planner's thread.
void wait_for_modules(host::Sysfs& sysfs, const model::Config& config,
                      const std::string& kernel_log, PassChannel& channel) {
  if (config.pfs.empty()) {
    return;  // nothing to bring up: no driver to wait for
  }
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(config.timeouts.modules_ms);
  bool announced = false;
  for (auto missing = host::missing_modules(sysfs, config.required_modules);
       !missing.empty() && std::chrono::steady_clock::now() < until;
       missing = host::missing_modules(sysfs, config.required_modules)) {
    if (model::load_failure_evidence(missing, host::read_kernel_log(kernel_log))) {
      return;  // the driver check says what the log says
    }
    if (!announced) {
      std::string names;
      for (const auto& m : missing) {
        names += (names.empty() ? "" : ", ") + m;
      }
      channel.post({.kind = PassMessage::Kind::kWaiting,
                    .step = "Waiting up to " + std::to_string(config.timeouts.modules_ms) +
                            " ms for modules to load: " + names});
      announced = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace

void start_planner(std::shared_ptr<PassChannel> channel, BringupInputs in) {
  // Reading sysfs can block (a driver holding its device lock): not on the loop.
  std::thread([channel = std::move(channel), in = std::move(in)] {
    PassMessage m;
    try {
      // Listening before anything is read or made: no netdev's udev event is missed.
      m.udev = std::make_shared<host::LibudevWait>(in.udev);
      host::RootedSysfs sysfs(in.roots.sysfs, in.calls, device_call_bound(in.config));
      wait_for_modules(sysfs, in.config, in.roots.kernel_log, *channel);
      auto host = std::make_shared<const model::HostInfo>(
          host::read_host(sysfs, {in.roots.proc, in.roots.kernel_log}));
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
        m.warnings = driver.warnings;
        m.warnings.insert(m.warnings.end(), plan->warnings.begin(), plan->warnings.end());
        m.targets = plan->pfs;
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

void start_pf_worker(std::shared_ptr<PassChannel> channel, std::shared_ptr<BusyPfs> busy,
                     std::shared_ptr<pipeline::NameRegistry> names, std::size_t index,
                     model::PfTarget target, BringupInputs in,
                     std::shared_ptr<const model::HostInfo> host,
                     std::shared_ptr<host::UdevWait> udev) {
  // Detached: a worker past its step's bound (its calls into the driver are bounded,
  // udev and port waits too, but the sum may be long) must not hold the daemon.
  std::thread([channel = std::move(channel), busy = std::move(busy), names = std::move(names),
               index, target = std::move(target), in = std::move(in), host = std::move(host),
               udev = std::move(udev)] {
    host::RootedSysfs sysfs(in.roots.sysfs, in.calls, device_call_bound(in.config));
    model::PfStatus status;
    try {
      host::NetlinkLinks links;
      const auto& t = in.config.timeouts;
      host::SysfsSriovHost sriov(
          sysfs, links,
          {std::chrono::milliseconds(t.numvfs_ms), std::chrono::milliseconds(t.bind_ms),
           device_call_bound(in.config)},
          in.roots.kernel_log);
      pipeline::PfHost os{sriov, links, *udev};
      status = pipeline::bring_up_pf(
          target, in.config, in.table, *host, os, *names, [&](const char* step) {
            channel->post({.kind = PassMessage::Kind::kStep, .pf = index, .step = step});
          });
    } catch (const std::exception& e) {
      status.pci = target.pci;
      status.state = model::PfState::kFailed;
      status.problems.push_back(
          model::problem(model::EventKind::kInternalError, e.what(), target.pci.str()));
    }
    {
      std::lock_guard lock(busy->mu);
      busy->pcis.erase(target.pci.str());
    }
    channel->post({.kind = PassMessage::Kind::kDone, .pf = index, .done = std::move(status)});
  }).detach();
}

}  // namespace vfready::daemon
