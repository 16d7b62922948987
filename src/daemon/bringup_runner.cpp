// SPDX-License-Identifier: Apache-2.0
#include "bringup_runner.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <spdlog/spdlog.h>
#include <algorithm>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "vfready/host/host_reader.hpp"
#include "vfready/host/links.hpp"
#include "vfready/host/sysfs.hpp"
#include "vfready/host/udev_wait.hpp"
#include "vfready/model/checks.hpp"
#include "vfready/model/plan.hpp"
#include "vfready/pipeline/pf_bringup.hpp"

namespace vfready::daemon {

namespace {

using Clock = std::chrono::steady_clock;

// What workers tell the watching thread.
struct Message {
  std::size_t pf = 0;
  std::string step;                     // a step started
  std::optional<model::PfStatus> done;  // or the PF is finished
};

// Shared with worker threads, which may outlive a run that gave up on them (a write
// that never returns): owned by shared_ptr, never by the stack.
struct Shared {
  explicit Shared(std::set<std::string> pfs) : names(std::move(pfs)) {}
  std::mutex mu;
  std::deque<Message> queue;
  int event_fd = -1;
  pipeline::NameRegistry names;
  ~Shared() {
    if (event_fd >= 0) {
      close(event_fd);
    }
  }
  void post(Message m) {
    {
      std::lock_guard lock(mu);
      queue.push_back(std::move(m));
    }
    const uint64_t one = 1;
    static_cast<void>(write(event_fd, &one, sizeof one));
  }
};

// How long a step may take before the PF is given up as timed out.
std::chrono::milliseconds step_bound(const std::string& step, const model::Config& config,
                                     uint16_t vfs) {
  const auto& t = config.timeouts;
  if (step == pipeline::StepNames::kVfs) {
    return std::chrono::milliseconds(t.numvfs_ms);
  }
  if (step == pipeline::StepNames::kGuids) {
    return std::chrono::milliseconds(uint64_t{t.bind_ms} * (vfs + 1U));
  }
  if (step == pipeline::StepNames::kUdev) {
    return std::chrono::milliseconds(t.udev_ms + 5000);
  }
  if (step == pipeline::StepNames::kValidate) {
    return std::chrono::milliseconds(t.port_active_ms + 30000);
  }
  return std::chrono::milliseconds(30000);
}

struct Running {
  std::string step;
  Clock::time_point since;
  bool finished = false;
};

// "PFs: 3 vfs, 5 guids, 0 done" for STATUS=, in step order.
std::string progress_line(const std::vector<Running>& running) {
  static const char* const kOrder[] = {
      pipeline::StepNames::kHardware, pipeline::StepNames::kVfs,   pipeline::StepNames::kGuids,
      pipeline::StepNames::kUdev,     pipeline::StepNames::kNames, pipeline::StepNames::kValidate};
  std::string line = "PFs:";
  for (const char* step : kOrder) {
    const auto n = std::count_if(running.begin(), running.end(),
                                 [&](const Running& r) { return !r.finished && r.step == step; });
    if (n > 0) {
      line += " " + std::to_string(n) + " " + step + ",";
    }
  }
  const auto done =
      std::count_if(running.begin(), running.end(), [](const Running& r) { return r.finished; });
  return line + " " + std::to_string(done) + " done";
}

}  // namespace

BringupResult run_bringup(const model::Config& config, const model::CompatTable& table,
                          const HostRoots& roots, host::Notifier& notifier, int signal_fd) {
  BringupResult result;
  const auto start = Clock::now();
  notifier.notify("STATUS=Reading the host");
  host::RootedSysfs sysfs(roots.sysfs);
  const auto host_info = host::read_host(sysfs, {roots.proc, roots.kernel_log});
  auto plan = model::make_plan(config, host_info);
  if (!plan) {
    spdlog::error("{}", plan.error().message);
    notifier.notify("STATUS=Configuration does not fit this host\nERRNO=22");
    return result;
  }
  notifier.notify("STATUS=Checking the driver");
  const auto driver = model::check_driver(config, table, host_info);
  for (const auto& w : driver.warnings) {
    spdlog::warn("driver: {}", w);
  }
  if (!driver.ok()) {
    for (const auto& f : driver.failures) {
      spdlog::error("driver: {}", f);
    }
    result.driver_failures = driver.failures;
    notifier.notify("STATUS=Driver check failed: " + driver.failures.front() + "\nERRNO=5");
    return result;
  }
  spdlog::info("driver: {} required modules loaded; kernel {}", config.required_modules.size(),
               host_info.kernel_release);

  const auto& targets = plan->pfs;
  std::set<std::string> configured;
  for (const auto& t : targets) {
    configured.insert(t.pci.str());
  }
  auto shared = std::make_shared<Shared>(std::move(configured));
  shared->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  result.pfs.resize(targets.size());
  std::vector<Running> running(targets.size(), Running{"start", Clock::now()});
  notifier.notify("STATUS=Bringing up " + std::to_string(targets.size()) + " PFs");
  for (std::size_t i = 0; i < targets.size(); ++i) {
    result.pfs[i].pci = targets[i].pci.str();
    // Detached: a worker stuck in a write the kernel never finishes must not hold the
    // daemon. Everything it touches is its own copy or owned by `shared`.
    std::thread([shared, i, target = targets[i], config, table, host_info, roots] {
      host::RootedSysfs sysfs(roots.sysfs);
      host::RunDirUdevWait udev(roots.udev_run);
      model::PfStatus status;
      try {
        host::NetlinkLinks links;
        pipeline::PfHost os{sysfs, links, udev};
        status = pipeline::bring_up_pf(target, config, table, host_info, os, shared->names,
                                       [&](const char* step) {
                                         shared->post({i, step, {}});
                                       });
      } catch (const std::exception& e) {
        status.pci = target.pci.str();
        status.state = model::PfState::kFailed;
        status.problems.emplace_back(e.what());
      }
      shared->post({i, {}, std::move(status)});
    }).detach();
  }

  std::size_t left = targets.size();
  while (left > 0) {
    // The nearest deadline of a running step bounds the wait.
    auto wait = std::chrono::milliseconds(60000);
    const auto now = Clock::now();
    for (std::size_t i = 0; i < targets.size(); ++i) {
      if (running[i].finished) {
        continue;
      }
      const auto bound = step_bound(running[i].step, config, targets[i].vfs);
      const auto until = running[i].since + bound;
      if (until <= now) {
        auto& pf = result.pfs[i];
        pf.state = model::PfState::kFailed;
        pf.step = running[i].step;
        pf.problems.push_back("step " + running[i].step + " of PF " + pf.pci +
                              " did not finish within " + std::to_string(bound.count()) +
                              " ms: given up (is the driver hung? see the kernel log)");
        spdlog::error("[{}] {}", pf.pci, pf.problems.back());
        running[i].finished = true;
        --left;
        continue;
      }
      wait = std::min(wait, std::chrono::duration_cast<std::chrono::milliseconds>(until - now) +
                                std::chrono::milliseconds(1));
    }
    if (left == 0) {
      break;
    }
    pollfd fds[2] = {{shared->event_fd, POLLIN, 0}, {signal_fd, POLLIN, 0}};
    if (poll(fds, signal_fd >= 0 ? 2 : 1, static_cast<int>(wait.count())) < 0) {
      continue;
    }
    if (signal_fd >= 0 && (fds[1].revents & POLLIN) != 0) {
      signalfd_siginfo si{};
      static_cast<void>(read(signal_fd, &si, sizeof si));
      spdlog::warn("signal {}: stopping the bring-up; VFs, names and GUIDs stay as they are",
                   si.ssi_signo);
      result.interrupted = true;
      return result;
    }
    uint64_t count = 0;
    static_cast<void>(read(shared->event_fd, &count, sizeof count));
    std::deque<Message> messages;
    {
      std::lock_guard lock(shared->mu);
      messages.swap(shared->queue);
    }
    for (auto& m : messages) {
      if (running[m.pf].finished) {
        continue;  // already given up as timed out
      }
      if (!m.done) {
        running[m.pf] = {m.step, Clock::now(), false};
        spdlog::info("[{}] {}", targets[m.pf].pci.str(), m.step);
        notifier.notify("STATUS=" + progress_line(running));
        continue;
      }
      running[m.pf].finished = true;
      --left;
      result.pfs[m.pf] = std::move(*m.done);
      const auto& pf = result.pfs[m.pf];
      for (const auto& p : pf.problems) {
        spdlog::error("[{}] {}", pf.pci, p);
      }
      for (const auto& vf : pf.vfs) {
        for (const auto& p : vf.problems) {
          spdlog::error("[{}] VF {}: {}", pf.pci, vf.index, p);
        }
      }
      spdlog::info("[{}] {} in {:.0f} ms", pf.pci, model::to_string(pf.state), pf.elapsed_ms);
      notifier.notify("STATUS=" + std::to_string(targets.size() - left) + "/" +
                      std::to_string(targets.size()) + " PFs done");
    }
  }

  result.outcome = model::outcome_of(result.pfs);
  const auto elapsed = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  std::size_t ready = 0;
  for (const auto& pf : result.pfs) {
    ready += pf.state == model::PfState::kReady ? 1 : 0;
  }
  const auto summary = std::string(model::to_string(result.outcome)) + ": " +
                       std::to_string(ready) + "/" + std::to_string(result.pfs.size()) +
                       " PFs ready";
  if (result.outcome == model::Outcome::kReady ||
      (result.outcome == model::Outcome::kDegraded && config.ready_when_degraded)) {
    notifier.notify("READY=1\nSTATUS=" + summary);
    result.ready_sent = true;
  } else {
    notifier.notify("STATUS=" + summary + "\nERRNO=5");
  }
  spdlog::info("{} in {:.0f} ms", summary, elapsed);
  return result;
}

}  // namespace vfready::daemon
