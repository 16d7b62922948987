// SPDX-License-Identifier: Apache-2.0
// The service's reload: a configuration read anew, judged as a start judges it, and put
// in force now or when the running pass ends; and the node problems that stand across
// passes (a refused reload, a contested name).
#include <algorithm>

#include "config_files.hpp"
#include "log.hpp"
#include "service.hpp"
#include "vfready/model/plan.hpp"

namespace vfready::daemon {

std::optional<std::string> Service::reload() {
  // systemd's reload protocol applies once the service has started; before READY=1 a
  // reload is read all the same, and applied after the first pass.
  const std::string ready = ready_sent_ ? "READY=1\n" : "";
  if (ready_sent_) {
    notifier_.notify("RELOADING=1\nSTATUS=Reloading " + options_.config_path);
  }
  // Read off the loop, which waits for it a second at most.
  constexpr std::chrono::milliseconds kReadBound{1000};
  auto loaded = load_config_within(options_.config_path, options_.compat_paths, kReadBound);
  // Judged as a start judges it (--check-config's exit 3): a plan on this host, as the
  // last pass read it.
  std::optional<Error> refused = loaded ? std::nullopt : std::optional<Error>(loaded.error());
  const auto host = bringup_ && bringup_->host() ? bringup_->host() : last_host_;
  if (loaded && host) {
    if (auto plan = model::make_plan(loaded.value().first, *host); !plan) {
      refused = plan.error();
    }
  }
  if (refused) {
    const auto message = refused->message + ": the running configuration stays";
    // Added to the problems in force, never in their place; one refusal at a time, and
    // listed until a reload is put in force.
    reload_refused_ = model::problem(model::EventKind::kReloadRefused, message);
    restore_standing_problems();
    publish();
    notifier_.notify(ready + "STATUS=" + message);
    return message;
  }
  reload_refused_.reset();
  restore_standing_problems();
  auto read = std::move(loaded).value();
  auto config = Result<model::Config>(std::move(read.first));
  auto table = Result<model::CompatTable>(std::move(read.second));
  log::info({}, "read " + options_.config_path);
  if (bringup_ && !bringup_->finished()) {
    // Never lost: applied when the running pass ends, the latest of several winning.
    pending_ = BringupInputs{config.value(), table.value(), inputs_.roots,
                             inputs_.calls,  inputs_.udev,  inputs_.hosts};
    const std::string text = "New configuration read; it applies when the running pass ends";
    log::info({}, text);
    notifier_.notify(ready + "STATUS=" + text);
    return std::nullopt;
  }
  inputs_.config = config.value();
  inputs_.table = table.value();
  files_.configure(inputs_.config.publish);
  keep_only_configured_pfs();
  ++status_.config_generation;
  publish();
  notifier_.notify(ready.empty() ? "STATUS=Reloaded" : "READY=1");
  start_bringup();
  return std::nullopt;
}

void Service::restore_standing_problems() {
  std::erase_if(status_.problems, [](const model::Problem& p) {
    return p.kind == model::EventKind::kReloadRefused || p.kind == model::EventKind::kNameContested;
  });
  if (reload_refused_) {
    status_.problems.push_back(*reload_refused_);
  }
  for (auto& p : fights_.problems(Clock::now())) {
    status_.problems.push_back(std::move(p));
  }
}

void Service::keep_only_configured_pfs() {
  // The PFs the configuration now in force selects, on the host as the last pass read it:
  // from the moment it is in force, the status lists no other (its pass lists them anew).
  const auto host = bringup_ && bringup_->host() ? bringup_->host() : last_host_;
  if (!host) {
    return;
  }
  const auto plan = model::make_plan(inputs_.config, *host);
  if (!plan) {
    return;  // the reload's gate refuses such a configuration
  }
  std::erase_if(status_.pfs, [&](const model::PfStatus& pf) {
    return std::none_of(plan->pfs.begin(), plan->pfs.end(),
                        [&](const model::PfTarget& t) { return t.pci == pf.pci; });
  });
}

}  // namespace vfready::daemon
