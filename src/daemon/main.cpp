// SPDX-License-Identifier: Apache-2.0
// vfreadyd: brings SR-IOV VFs of InfiniBand HCAs up before kubelet, then keeps them right.
#include <malloc.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <map>

#include "config_files.hpp"
#include "log.hpp"
#include "report_printer.hpp"
#include "service.hpp"
#include "status_files.hpp"
#include "vfready/host/journal.hpp"
#include "vfready/host/notifier.hpp"
#include "vfready/model/plan_report.hpp"
#include "vfready/version.hpp"

namespace {

struct Options {
  vfready::daemon::ServiceOptions service;
  bool check_config = false;
  bool json = false;
  bool generate_config = false;
  std::string bus_address;
  bool no_bus = false;
  vfready::daemon::log::Target log_target = vfready::daemon::log::Target::kAuto;
};

// Exits without running destructors: the bus connector's thread may still wait for a bus
// that does not answer, and must not be waited for.
[[noreturn]] void leave(int code) {
  static_cast<void>(std::fflush(nullptr));
  _exit(code);
}

// vfreadyd's options and flags, with their defaults, into `o` and `log_target`.
void add_options(CLI::App& app, Options& o, std::string& log_target) {
  auto& s = o.service;
  s.config_path = VFREADY_CONFDIR "/vfready.json";
  s.compat_paths = {VFREADY_DATADIR "/vfready/compatibility.json",
                    VFREADY_CONFDIR "/compatibility.json"};
  app.add_option("--config", s.config_path, "Configuration file; drop-ins in <its dir>/vfready.d/")
      ->capture_default_str();
  app.add_option("--sysfs-root", s.roots.sysfs, "sysfs to work on")->capture_default_str();
  app.add_option("--proc-root", s.roots.proc, "procfs to read")->capture_default_str();
  app.add_option("--kernel-log", s.roots.kernel_log, "Kernel log to scan")->capture_default_str();
  app.add_option("--compat", s.compat_paths,
                 "Compatibility tables (driver/kernel, firmware); later ones take precedence")
      ->capture_default_str();
  app.add_flag("--once", s.once, "Bring up, print the status, exit: 0 when ready, 1 otherwise");
  auto* check = app.add_flag("--check-config", o.check_config,
                             "Validate the config against this host and print the plan (the "
                             "files read; each PF and VF now -> planned) with every problem a "
                             "pass would meet; change nothing");
  app.add_flag("--json", o.json, "With --check-config: the plan as one JSON object")->needs(check);
  app.add_flag("--generate-config", o.generate_config,
               "Print a configuration for this host's InfiniBand PFs (by PCI address, names "
               "ibs<N> and ibs<N>v<M>, derived GUIDs); change nothing")
      ->excludes(check);
  app.add_option("--bus-address", o.bus_address,
                 "D-Bus address to serve on (default: the system bus, or "
                 "$DBUS_SYSTEM_BUS_ADDRESS)");
  app.add_flag("--no-bus", o.no_bus, "Do not serve D-Bus");
  app.add_option("--log-target", log_target,
                 "auto (the journal when stderr is connected to it), journal or console")
      ->check(CLI::IsMember({"auto", "journal", "console"}))
      ->capture_default_str();
  app.add_flag("--debug-stall-on-sigusr2", s.stall_on_sigusr2,
               "Test hook: SIGUSR2 wedges the event loop (watchdog pings stop)")
      ->group("");
  app.footer(
      "Exit codes: 0 ready, or stopped by SIGTERM/SIGINT; 1 not ready, or bad config (--once:\n"
      "also interrupted before its outcome);\n"
      "2 bad usage. --check-config: 0 a pass would make every PF ready, 1 invalid config\n"
      "files, 3 a config that does not fit this host (plan refused, or PFs with problems).\n"
      "--generate-config: 0 written, 3 no InfiniBand PF found.\n"
      "Signals: SIGTERM or SIGINT stops (VFs, names and GUIDs stay); SIGHUP reloads the config;\n"
      "SIGUSR1 and SIGALRM are logged and ignored, SIGPIPE ignored.\n"
      "Netlink acts on the network namespace vfreadyd runs in.");
}

// The configuration vfreadyd starts with (the config, then the tables, each read and
// parsed); nullopt when there is none, said on stderr and where the mode says it.
std::optional<vfready::daemon::LoadedConfig> load_at_start(const Options& o) {
  const auto& s = o.service;
  auto config = vfready::daemon::load_config(s.config_path);
  auto table = config ? vfready::daemon::load_compat_tables(s.compat_paths)
                      : vfready::Result<vfready::model::CompatTable>(config.error());
  if (config && table) {
    return vfready::daemon::LoadedConfig{std::move(config).value(), std::move(table).value()};
  }
  const auto& why = !config ? config.error().message : table.error().message;
  std::cerr << "vfreadyd: " << why << '\n';
  if (o.check_config && o.json) {
    std::cout << vfready::model::plan_error_json({s.config_path}, why);
  } else if (!o.check_config && !s.once) {
    vfready::daemon::write_start_failure(s.config_path, why);
  }
  return std::nullopt;
}

int run(int argc, char** argv) {
  CLI::App app{
      "vfreadyd: creates SR-IOV VFs on InfiniBand HCAs, gives them GUIDs and stable names,\n"
      "validates them and tells systemd READY=1 before kubelet starts; then keeps them right.",
      "vfreadyd"};
  app.set_version_flag("--version", std::string("vfreadyd ") + vfready::kVersion);
  Options o;
  std::string log_target = "auto";
  add_options(app, o, log_target);
  auto& s = o.service;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // the exit code --help promises for bad usage
  }
  o.log_target = log_target == "journal"   ? vfready::daemon::log::Target::kJournal
                 : log_target == "console" ? vfready::daemon::log::Target::kConsole
                                           : vfready::daemon::log::Target::kAuto;

  vfready::daemon::log::setup(o.log_target, std::make_shared<vfready::host::SystemdJournal>(),
                              "vfreadyd");
  if (!o.no_bus) {
    s.bus_address = o.bus_address;
  }

  if (o.generate_config) {
    return vfready::daemon::print_generated_config(s.roots,
                                                   VFREADY_DATADIR "/vfready/vfready.schema.json");
  }
  auto loaded = load_at_start(o);
  if (!loaded) {
    return 1;
  }
  if (o.check_config) {
    return vfready::daemon::print_plan(loaded->config, loaded->table, s.roots, o.json);
  }

  vfready::daemon::BringupInputs inputs{std::move(loaded->config), std::move(loaded->table),
                                        s.roots};
  // Before the service's threads and its passes' memory: the spawner forks the helpers
  // of calls into drivers, each a copy of this small image (helper_spawner.hpp). Without
  // one, each helper is a fork of the daemon as it is then.
  static_cast<void>(inputs.calls->start_spawner());
  vfready::host::SystemdNotifier notifier;
  vfready::daemon::Service service(s, std::move(inputs), notifier);
  leave(service.run());
}

}  // namespace

int main(int argc, char** argv) {
  // One malloc arena: the passes run on the loop, and the host's reader (a worker process)
  // has threads of its own only in its own process. An arena of another thread would keep
  // what it freed out of the loop's reach, as peak RSS (docs/performance.md says by how
  // much). glibc's MALLOC_ARENA_MAX (or glibc.malloc.arena_max in GLIBC_TUNABLES) still
  // decides, when set.
  const char* tunables = std::getenv("GLIBC_TUNABLES");  // NOLINT(concurrency-mt-unsafe)
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr &&      // NOLINT(concurrency-mt-unsafe)
      (tunables == nullptr || std::strstr(tunables, "glibc.malloc.arena_max") == nullptr)) {
    mallopt(M_ARENA_MAX, 1);  // NOLINT(concurrency-mt-unsafe): before any thread
  }
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "vfreadyd: " << e.what() << '\n';
    leave(1);  // the bus connector may still run: no destructors behind its back
  }
}
