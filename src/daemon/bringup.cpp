// SPDX-License-Identifier: Apache-2.0
#include "bringup.hpp"

#include <poll.h>

#include <algorithm>
#include <optional>

#include "log.hpp"
#include "vfready/pipeline/pf_bringup.hpp"

namespace vfready::daemon {

namespace {

// How long systemd is told a step may take (EXTEND_TIMEOUT_USEC), past the bounds of the
// calls the step makes: each call into a driver has a deadline of its own, past which
// the PF is stuck, so this only keeps systemd's start timeout away from a step that
// makes progress.
std::chrono::milliseconds step_bound(const std::string& step, const model::Config& config,
                                     uint16_t vfs) {
  const auto& t = config.timeouts;
  if (step == pipeline::StepNames::kVfs) {
    // sriov_numvfs, and sriov_drivers_autoprobe before and after it.
    return std::chrono::milliseconds(uint64_t{t.numvfs_ms} + 2ULL * t.device_call_ms + 5000);
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

// Logs a problem with its kind's MESSAGE_ID, its PF and VF.
void log_problem(spdlog::level::level_enum level, const std::string& step,
                 const std::string& interface, const model::Problem& p) {
  log::write(level, {.step = step, .pf = p.pf, .vf = p.vf, .interface = interface, .event = p.kind},
             p.text);
}

}  // namespace

std::string progress_line(const std::vector<std::string>& steps, std::size_t done) {
  static const char* const kOrder[] = {
      pipeline::StepNames::kHardware, pipeline::StepNames::kVfs,   pipeline::StepNames::kGuids,
      pipeline::StepNames::kUdev,     pipeline::StepNames::kNames, pipeline::StepNames::kValidate};
  std::string line = "PFs:";
  for (const char* step : kOrder) {
    const auto n = std::count(steps.begin(), steps.end(), step);
    if (n > 0) {
      line += " " + std::to_string(n) + " " + step + ",";
    }
  }
  return line + " " + std::to_string(done) + " done";
}

Bringup::Bringup(BringupInputs inputs, model::DaemonStatus& status, Clock::time_point epoch,
                 std::shared_ptr<pipeline::NameRegistry> names, BringupHooks hooks,
                 std::set<std::string> only)
    : in_(std::move(inputs)),
      status_(status),
      epoch_(epoch),
      names_(std::move(names)),
      hooks_(std::move(hooks)),
      only_(std::move(only)) {}

Bringup::~Bringup() = default;

void Bringup::let_autoprobe_go() {
  if (passes_) {
    passes_->let_autoprobe_go();
  }
}

double Bringup::since_epoch_ms() const {
  return std::chrono::duration<double, std::milli>(Clock::now() - epoch_).count();
}

void Bringup::start() {
  started_ = Clock::now();
  status_.state = model::DaemonState::kConfiguring;
  status_.text = "Reading the host";
  status_.problems.clear();
  hooks_.progress(status_.text, std::chrono::milliseconds(30000));
  const char* doing = "listening to udev";
  try {
    // On the loop, which reads udev's events, and before anything is read or made: no
    // netdev's udev event is missed.
    udev_ = in_.host_access->listen(in_);
    doing = "starting the host's reader";
    planner_ = refused_ ? std::make_unique<PassPlanner>(in_, *refused_)
                        : std::make_unique<PassPlanner>(in_);
  } catch (const std::exception& e) {
    // Told as the planner would, at the loop's next turn.
    planner_ = std::make_unique<PassPlanner>(
        in_, model::problem(model::EventKind::kHostReadFailed,
                            std::string(doing) + " failed: " + e.what()));
  }
  PfPasses::Hooks hooks;
  hooks.step = [this](std::size_t pf, const char* step) { on_step(pf, step); };
  hooks.done = [this](std::size_t pf, model::PfStatus status) { on_done(pf, std::move(status)); };
  passes_ = std::make_unique<PfPasses>(std::move(hooks), planner_->fd());
}

std::unique_ptr<PassPlanner> Bringup::take_given_up_reader() {
  if (!finished_ || !planner_ || !planner_->given_up()) {
    return nullptr;
  }
  passes_->forget_planner();
  planner_->outlive_inputs();
  return std::move(planner_);
}

PollSpec Bringup::prepare() {
  if (finished_ || !planner_) {
    return {passes_->fd(), 0, std::nullopt};
  }
  auto until = passes_->until();
  if (const auto read_until = planner_->until()) {
    until = until ? std::min(*until, *read_until) : read_until;
  }
  return {passes_->fd(), POLLIN, until};
}

void Bringup::dispatch(short /*revents*/) {
  if (finished_ || !planner_) {
    return;
  }
  const bool told = passes_->turn();
  const auto read_until = planner_ ? planner_->until() : std::nullopt;
  if (read_until && (told || Clock::now() >= *read_until)) {
    auto messages = planner_->take();
    if (planner_->ended()) {
      passes_->forget_planner();  // its fd stays readable (the worker's end closed)
    }
    for (auto& m : messages) {
      on_message(m);  // the end's hook may take the planner (take_given_up_reader)
    }
  }
  if (!finished_ && !targets_.empty() && left_ == 0) {
    finish();
  }
}

void Bringup::on_message(PassMessage& m) {
  switch (m.kind) {
    case PassMessage::Kind::kStopped:
      for (const auto& w : m.warnings) {
        log_problem(spdlog::level::warn, "driver", "", w);
      }
      host_ = m.host;  // read, and planned: the driver check stopped the pass
      stop(m.host ? "Driver check failed: " : "Configuration does not fit this host: ",
           std::move(m.problems));
      return;
    case PassMessage::Kind::kPlanned:
      for (const auto& w : m.warnings) {
        log_problem(spdlog::level::warn, "driver", "", w);
      }
      on_planned(std::move(m.targets), m.host);
      return;
    case PassMessage::Kind::kWaiting:
      log::info({.step = "driver"}, m.step);
      status_.text = m.step;
      hooks_.progress(status_.text, std::chrono::milliseconds(in_.config.timeouts.modules_ms) +
                                        std::chrono::seconds(30));
      hooks_.changed();
      return;
  }
}

void Bringup::on_planned(std::vector<model::PfTarget> targets,
                         const std::shared_ptr<const model::HostInfo>& host) {
  targets_ = std::move(targets);
  host_ = host;
  log::info({.step = "driver"}, "driver: " + std::to_string(in_.config.required_modules.size()) +
                                    " required modules loaded; kernel " + host->kernel_release);
  std::set<std::string> configured;
  for (const auto& t : targets_) {
    configured.insert(t.pci.str());
  }
  // The registry knows the configured PFs before any PF's pass names a link.
  names_->configure(std::move(configured));
  status_.pfs = carried_over(*host);
  running_.assign(targets_.size(), Running{"start", false});
  left_ = 0;
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    running_[i].finished = !only_.empty() && !only_.contains(targets_[i].pci.str()) &&
                           status_.pfs[i].state != model::PfState::kPending;
    left_ += running_[i].finished ? 0 : 1;
  }
  status_.text = "Bringing up " + std::to_string(left_) + " PFs";
  hooks_.progress(status_.text, std::chrono::milliseconds(30000));
  hooks_.changed();
  start_passes(host);
  if (left_ == 0) {
    finish();
  }
}

std::vector<model::PfStatus> Bringup::carried_over(const model::HostInfo& host) const {
  // Keep what is known of PFs still configured (names, VFs) until their passes report.
  std::vector<model::PfStatus> pfs;
  for (const auto& t : targets_) {
    const auto pci = t.pci.str();
    auto it = std::find_if(status_.pfs.begin(), status_.pfs.end(),
                           [&](const model::PfStatus& p) { return p.pci == t.pci; });
    model::PfStatus pf = it == status_.pfs.end() ? model::PfStatus{} : *it;
    pf.pci = t.pci;
    pf.identity.configured_name = t.name ? t.name->str() : "";
    pf.identity.vfs_configured = t.vfs;
    if (const auto* info = host.find(t.pci)) {
      if (pf.identity.kernel_name.empty()) {
        pf.identity.kernel_name = info->netdev.value_or("");  // before vfready renamed it
      }
      pf.identity.vendor = info->vendor;
      pf.identity.device = info->device;
      pf.identity.vf_device = info->vf_device;
    }
    if (only_.empty() || only_.contains(pci) || it == status_.pfs.end()) {
      pf.state = model::PfState::kPending;
      pf.steps.clear();
      pf.step.clear();
    }
    pfs.push_back(std::move(pf));
  }
  return pfs;
}

void Bringup::start_passes(const std::shared_ptr<const model::HostInfo>& host) {
  std::vector<PassPf> pfs;
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    if (!running_[i].finished) {  // else: not part of this pass
      pfs.push_back({i, &targets_[i]});
    }
  }
  if (!pfs.empty()) {
    passes_->start(std::move(pfs), in_, host, udev_, names_);
  }
}

void Bringup::close_step(std::size_t pf, model::StepState state) {
  auto& steps = status_.pfs[pf].steps;
  if (!steps.empty() && steps.back().state == model::StepState::kRunning) {
    steps.back().state = state;
    steps.back().elapsed_ms = since_epoch_ms() - steps.back().started_ms;
  }
}

void Bringup::on_step(std::size_t pf, const std::string& step) {
  running_[pf] = {step, false};
  close_step(pf, model::StepState::kDone);
  auto& status = status_.pfs[pf];
  status.step = step;
  status.steps.push_back({step, model::StepState::kRunning, since_epoch_ms(), 0});
  log::info({.step = step, .pf = status.pci.str()}, step);
  std::vector<std::string> steps;
  std::size_t done = 0;
  for (const auto& r : running_) {
    if (r.finished) {
      ++done;
    } else {
      steps.push_back(r.step);
    }
  }
  status_.text = progress_line(steps, done);
  hooks_.progress(status_.text, step_bound(step, in_.config, targets_[pf].vfs));
  hooks_.changed();
}

void Bringup::on_done(std::size_t pf, model::PfStatus status) {
  running_[pf].finished = true;
  --left_;
  close_step(pf, status.state == model::PfState::kReady ? model::StepState::kDone
                                                        : model::StepState::kFailed);
  status.steps = std::move(status_.pfs[pf].steps);
  status.identity = std::move(status_.pfs[pf].identity);
  status_.pfs[pf] = std::move(status);
  const auto& s = status_.pfs[pf];
  for (const auto& p : s.problems) {
    log_problem(spdlog::level::err, s.step, s.name, p);
  }
  for (const auto& w : s.warnings) {
    log_problem(spdlog::level::warn, s.step, s.name, w);
  }
  for (const auto& vf : s.vfs) {
    for (const auto& p : vf.problems) {
      log_problem(spdlog::level::err, s.step, vf.name, p);
    }
  }
  log::info({.pf = s.pci.str(), .interface = s.name},
            std::string(model::to_string(s.state)) + " in " +
                std::to_string(static_cast<long>(s.elapsed_ms)) + " ms" +
                (s.changes.any() ? "; changed: " + model::describe(s.changes) : ""));
  status_.text =
      std::to_string(targets_.size() - left_) + "/" + std::to_string(targets_.size()) + " PFs done";
  hooks_.progress(status_.text, std::chrono::milliseconds(30000));
  hooks_.changed();
}

void Bringup::stop(const std::string& why, std::vector<model::Problem> problems) {
  for (const auto& p : problems) {
    log_problem(spdlog::level::err, "driver", "", p);
  }
  status_.problems = std::move(problems);
  finished_ = true;
  udev_.reset();
  outcome_ = model::Outcome::kFailed;
  status_.state = model::state_of(outcome_);
  status_.text = why + status_.problems.front().text;
  status_.ready_ms = since_epoch_ms();
  status_.pass_ms = std::chrono::duration<double, std::milli>(Clock::now() - started_).count();
  hooks_.changed();
  hooks_.finished();
}

void Bringup::finish() {
  finished_ = true;
  udev_.reset();  // its wait is for this pass's netdevs
  outcome_ = model::outcome_of(status_.pfs);
  std::size_t ready = 0;
  status_.changes = {};
  for (const auto& pf : status_.pfs) {
    ready += pf.state == model::PfState::kReady ? 1 : 0;
    if (only_.empty() || only_.contains(pf.pci.str())) {
      status_.changes += pf.changes;
    }
  }
  status_.state = model::state_of(outcome_);
  status_.text = std::string(model::to_string(outcome_)) + ": " + std::to_string(ready) + "/" +
                 std::to_string(status_.pfs.size()) + " PFs ready";
  status_.ready_ms = since_epoch_ms();
  status_.pass_ms = std::chrono::duration<double, std::milli>(Clock::now() - started_).count();
  const auto event = outcome_ == model::Outcome::kReady      ? model::EventKind::kReady
                     : outcome_ == model::Outcome::kDegraded ? model::EventKind::kDegraded
                                                             : model::EventKind::kFailed;
  // "Nothing needed changing" only where the pass found everything right: a pass that
  // failed may have changed nothing because a write failed.
  const char* unchanged =
      outcome_ == model::Outcome::kReady ? "nothing needed changing" : "nothing changed";
  (outcome_ == model::Outcome::kReady ? log::info : log::warn)(
      {.event = event},
      status_.text + " in " + std::to_string(static_cast<long>(status_.pass_ms)) + " ms; " +
          (status_.changes.any() ? "changed: " + model::describe(status_.changes) : unchanged));
  hooks_.changed();
  hooks_.finished();
}

}  // namespace vfready::daemon
