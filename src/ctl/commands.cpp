// SPDX-License-Identifier: Apache-2.0
#include "commands.hpp"

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "pass_follow.hpp"
#include "status_source.hpp"
#include "vfready/bus/bus.hpp"
#include "vfready/model/printable.hpp"
#include "vfready/model/status_json.hpp"
#include "vfready/model/status_table.hpp"
#include "vfready/model/yaml_writer.hpp"

namespace vfready::ctl {

namespace {

int code_of(const bus::ClientError& e) {
  switch (e.kind()) {
    case bus::ClientError::Kind::kNotRunning:
      return kNotRunning;
    case bus::ClientError::Kind::kAccessDenied:
      return kDenied;
    default:
      return kFailed;
  }
}

// Runs `body`, turning what the bus says into a message and an exit code.
template <typename F>
int guarded(F&& body) {
  try {
    return body();
  } catch (const bus::ClientError& e) {
    std::cerr << "vfreadyctl: " << e.what() << '\n';
    return code_of(e);
  }
}

void note(const Fetched& f) {
  if (f.from_file) {
    std::cerr << "vfreadyctl: " << *f.from_file << '\n';
  }
}

// The structured form asked for with -o (or --json), "" for the table.
std::string structured(const nlohmann::json& value, const Output& out) {
  if (out.json || out.format == "json") {
    return value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  return out.format == "yaml" ? model::to_yaml(value) : "";
}

Clock::time_point after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

int status(const Where& where, const Output& out) {
  return guarded([&] {
    const auto f = fetch_status(where.bus_address, where.status_file);
    note(f);
    const auto text = structured(f.status, out);
    std::cout << (!text.empty() ? text : model::render_status(f.status, out.colour, out.vfs));
    return kOk;
  });
}

int describe(const Where& where, const std::string& key, const Output& out) {
  return guarded([&] {
    nlohmann::json pf;
    try {
      pf = parse_answer(bus::Client::connect(where.bus_address)->describe_pf(key));
    } catch (const bus::ClientError& e) {
      if (e.kind() != bus::ClientError::Kind::kNotRunning) {
        throw;
      }
      const auto f = status_file_instead(e, where.status_file);
      note(f);
      const auto* found = model::find_pf(f.status, key);
      if (found == nullptr) {
        std::cerr << "vfreadyctl: no configured PF or VF has the PCI address or name \""
                  << model::printable_head(key) << "\"\n";
        return kFailed;
      }
      pf = *found;
    }
    const auto text = structured(pf, out);
    std::cout << (!text.empty() ? text : model::render_pf(pf, out.colour));
    return kOk;
  });
}

int wait(const Where& where, double timeout_s) {
  const auto until = after(timeout_s);
  std::string last = "vfreadyd has not answered and has written no status file";
  for (;;) {
    try {
      const auto f = fetch_status(where.bus_address, where.status_file);
      const auto& s = f.status;
      const auto state = model::text_at(s, "state", "-");
      if (model::flag_at(s, "node_ready", false)) {
        clear_progress();
        std::cout << model::printable(model::text_at(s, "status", "ready"))
                  << '\n';  // "ready: 8/8 PFs ready"
        return kOk;
      }
      last = model::printable(state + ": " + model::text_at(s, "status", "-"));
      show_progress("waiting: " + last);
      // Not running and not ready: the bring-up failed and vfreadyd exited (systemd may
      // start it again, but this answer is what a script waiting on it needs now).
      if (f.from_file && state != "starting" && state != "configuring") {
        clear_progress();
        std::cerr << "vfreadyctl: not ready: " << last << "\nvfreadyctl: " << *f.from_file << '\n';
        return kFailed;
      }
    } catch (const bus::ClientError& e) {
      if (e.kind() != bus::ClientError::Kind::kNotRunning) {
        clear_progress();
        std::cerr << "vfreadyctl: " << e.what() << '\n';
        return code_of(e);
      }
      last = e.what();  // not started yet: it may be
    }
    if (Clock::now() >= until) {
      clear_progress();
      std::cerr << "vfreadyctl: not ready after " << timeout_s << " s: " << last << '\n';
      return kTimedOut;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

int reconcile(const Where& where, bool wait_for_it, double timeout_s) {
  return guarded([&] {
    auto client = bus::Client::connect(where.bus_address);
    const auto until = after(timeout_s);
    // Started now, or queued behind the pass that runs: either way it has this number.
    const auto pass = client->reconcile();
    if (!wait_for_it) {
      std::cout << "reconcile requested: pass " << pass << '\n';
      return kOk;
    }
    return follow_pass(*client, pass, until, timeout_s);
  });
}

int reload(const Where& where, double timeout_s, bool wait_for_pass) {
  return guarded([&] {
    auto client = bus::Client::connect(where.bus_address);
    const auto before = client->config_generation();
    client->reload();  // a refused configuration throws here, with the reason
    const auto until = after(timeout_s);
    // In force at once, or when the running pass ends: its generation tells, and the
    // pass that applies it is the one started with it (one status has both).
    for (;;) {
      const auto status = nlohmann::json::parse(client->describe());
      if (model::number_at(status, "config_generation", before) != before) {
        if (!wait_for_pass) {
          break;
        }
        return follow_pass(*client, model::number_at(status, "passes_started", uint64_t{0}), until,
                           timeout_s);
      }
      show_progress("waiting for the running pass to end: " +
                    model::text_at(status, "status", "-"));
      if (Clock::now() >= until) {
        clear_progress();
        std::cerr << "vfreadyctl: the new configuration was read, but is not in force after "
                  << timeout_s << " s: a pass is still running (vfreadyctl status)\n";
        return kFailed;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    clear_progress();
    std::cout << "configuration reloaded and in force\n";
    return kOk;
  });
}

int render(const Where& where, const std::string& target,
           const model::ClusterConfigOptions& options) {
  return guarded([&] {
    const auto f = fetch_status(where.bus_address, where.status_file);
    note(f);
    auto config = model::render_cluster_config(target, f.status, options);
    if (!config) {
      std::cerr << "vfreadyctl: " << config.error().message << '\n';
      return kFailed;
    }
    for (const auto& warning : model::render_warnings(f.status)) {
      std::cerr << "vfreadyctl: warning: " << warning << '\n';
    }
    std::cout << config.value();
    return kOk;
  });
}

}  // namespace vfready::ctl
