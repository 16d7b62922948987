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

void Service::reload(std::function<void(std::optional<std::string>)> done) {
  // systemd's reload protocol applies once the service has started; before READY=1 a
  // reload is read all the same, and applied after the first pass.
  const bool told = ready_sent_;
  if (told) {
    notifier_.notify("RELOADING=1\nSTATUS=Reloading " + options_.config_path);
  }
  // Read by a reader process the loop waits for (ConfigReads), never by the loop.
  config_reads_.read([this, told, done = std::move(done)](Result<host::ConfigTexts> texts) {
    std::optional<std::string> refused;
    try {
      refused = apply_reload(parse_config_texts(texts), told);
    } catch (const std::exception& e) {
      // Its caller is answered all the same (a D-Bus Reload waits for it).
      refused = std::string("applying the configuration failed: ") + e.what();
      log::error({}, "reload: " + *refused);
    }
    if (done) {
      done(std::move(refused));
    }
  });
}

std::optional<std::string> Service::apply_reload(Result<LoadedConfig> loaded, bool reloading) {
  const std::string ready = reloading ? "READY=1\n" : "";
  // Judged as a start judges it (--check-config's exit 3): a plan on this host, as the
  // last pass read it.
  std::optional<Error> refused = loaded ? std::nullopt : std::optional<Error>(loaded.error());
  const auto host = bringup_ && bringup_->host() ? bringup_->host() : last_host_;
  if (loaded && host) {
    if (auto plan = model::make_plan(loaded->config, *host); !plan) {
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
  log::info({}, "read " + options_.config_path);
  if (bringup_ && !bringup_->finished()) {
    // Never lost: applied when the running pass ends, the latest of several winning.
    pending_ = BringupInputs{std::move(read.config), std::move(read.table), inputs_.roots,
                             inputs_.calls,          inputs_.udev,          inputs_.host_access};
    const std::string text = "New configuration read; it applies when the running pass ends";
    log::info({}, text);
    notifier_.notify(ready + "STATUS=" + text);
    return std::nullopt;
  }
  inputs_.config = std::move(read.config);
  inputs_.table = std::move(read.table);
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
