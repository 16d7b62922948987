// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "event_loop.hpp"
#include "host_roots.hpp"
#include "pass_planner.hpp"
#include "pf_passes.hpp"
#include "vfready/model/compat_table.hpp"
#include "vfready/model/config.hpp"
#include "vfready/model/plan.hpp"
#include "vfready/model/status.hpp"
#include "vfready/pipeline/name_registry.hpp"

// One bring-up of every configured PF, driven by the event loop: the host is read by a
// worker process (the planner, pass_planner.hpp), whose socket the loop watches; the loop
// plans and checks the driver on what it read; then every PF's pass is a task the loop
// drives (pf_passes.hpp), all at once. The loop keeps the status and the log.
namespace vfready::daemon {

struct BringupHooks {
  std::function<void()> changed;  // the status changed
  // A step started: the STATUS= line, and how long the step may take.
  std::function<void(const std::string& line, std::chrono::milliseconds bound)> progress;
  std::function<void()> finished;  // the outcome is in the status
};

class Bringup final : public EventSource {
 public:
  // `only`: the PCI addresses of the PFs to bring up (a reconcile after drift); empty: all.
  // `names`: the daemon's node-wide name registry, which outlives every bring-up.
  Bringup(BringupInputs inputs, model::DaemonStatus& status, Clock::time_point epoch,
          std::shared_ptr<pipeline::NameRegistry> names, BringupHooks hooks,
          std::set<std::string> only = {});
  ~Bringup() override;
  Bringup(const Bringup&) = delete;
  Bringup& operator=(const Bringup&) = delete;

  // Before start(): the pass reads no host and stops with `problem` (an earlier reader
  // has not ended).
  void refuse_host_read(model::Problem problem) { refused_ = std::move(problem); }
  void start();
  [[nodiscard]] bool finished() const { return finished_; }
  // Once finished: its host reader, when the pass gave up on it before it ended (it may
  // still hand over calls it left behind); null otherwise.
  std::unique_ptr<PassPlanner> take_given_up_reader();
  // The host as this pass read it for its plan (nullptr until then).
  [[nodiscard]] const std::shared_ptr<const model::HostInfo>& host() const { return host_; }
  [[nodiscard]] model::Outcome outcome() const { return outcome_; }
  // Whether this bring-up is (still) working on PF `pci`.
  [[nodiscard]] bool covers(const std::string& pci) const { return !finished_ && went_over(pci); }
  // Whether this bring-up's pass is (or was) over PF `pci`.
  [[nodiscard]] bool went_over(const std::string& pci) const {
    return only_.empty() || only_.contains(pci);
  }

  PollSpec prepare() override;
  void dispatch(short revents) override;
  // The daemon's end: autoprobe on again on each PF a pass of this bring-up has it off
  // (PfPasses::let_autoprobe_go).
  void let_autoprobe_go();

 private:
  struct Running {
    std::string step;
    bool finished = false;
  };
  void on_message(PassMessage& m);
  void on_planned(std::vector<model::PfTarget> targets,
                  const std::shared_ptr<const model::HostInfo>& host);
  // The status's PFs for this pass's targets: what is known of those still configured
  // (names, VFs) is kept until their passes report.
  [[nodiscard]] std::vector<model::PfStatus> carried_over(const model::HostInfo& host) const;
  // The passes of this bring-up's PFs.
  void start_passes(const std::shared_ptr<const model::HostInfo>& host);
  void on_step(std::size_t pf, const std::string& step);
  void on_done(std::size_t pf, model::PfStatus status);
  void stop(const std::string& why, std::vector<model::Problem> problems);
  void finish();
  [[nodiscard]] double since_epoch_ms() const;
  void close_step(std::size_t pf, model::StepState state);

  BringupInputs in_;
  model::DaemonStatus& status_;
  Clock::time_point epoch_;
  Clock::time_point started_;
  std::shared_ptr<pipeline::NameRegistry> names_;
  BringupHooks hooks_;
  std::set<std::string> only_;
  std::unique_ptr<PassPlanner> planner_;  // null once taken (take_given_up_reader)
  std::optional<model::Problem> refused_;
  std::shared_ptr<host::UdevWait> udev_;  // the pass's: every PF's pass waits through it
  std::vector<model::PfTarget> targets_;  // set once (on_planned): passes point into it
  std::shared_ptr<const model::HostInfo> host_;
  std::vector<Running> running_;
  std::unique_ptr<PfPasses> passes_;  // made with the channel, in start()
  std::size_t left_ = 0;
  bool finished_ = false;
  model::Outcome outcome_ = model::Outcome::kFailed;
};

// "PFs: 3 vfs, 5 guids, 0 done" for STATUS=, in step order.
std::string progress_line(const std::vector<std::string>& steps, std::size_t done);

}  // namespace vfready::daemon
