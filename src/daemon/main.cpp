// SPDX-License-Identifier: Apache-2.0
// vfreadyd: brings SR-IOV VFs of InfiniBand HCAs up before kubelet, then keeps them right.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <iostream>

#include "bringup_runner.hpp"
#include "config_files.hpp"
#include "vfready/host/notifier.hpp"
#include "vfready/version.hpp"

namespace {

struct Options {
  std::string config = "/etc/vfready/vfready.json";
  vfready::daemon::HostRoots roots;
  std::vector<std::string> compat = {VFREADY_DATADIR "/vfready/compatibility.json",
                                     "/etc/vfready/compatibility.json"};
  bool once = false;
  bool check_config = false;
};

// Exits without running destructors: worker threads may still be blocked in a sysfs
// write that the kernel never finishes, and must not be waited for.
[[noreturn]] void leave(int code) {
  static_cast<void>(std::fflush(nullptr));
  _exit(code);
}

int run(int argc, char** argv) {
  CLI::App app{
      "vfreadyd: creates SR-IOV VFs on InfiniBand HCAs, gives them GUIDs and stable names,\n"
      "validates them and tells systemd READY=1 before kubelet starts; then keeps them right.",
      "vfreadyd"};
  app.set_version_flag("--version", std::string("vfreadyd ") + vfready::kVersion);
  Options o;
  app.add_option("--config", o.config, "Configuration file; drop-ins in <its dir>/vfready.d/")
      ->capture_default_str();
  app.add_option("--sysfs-root", o.roots.sysfs, "sysfs to work on")->capture_default_str();
  app.add_option("--proc-root", o.roots.proc, "procfs to read")->capture_default_str();
  app.add_option("--kernel-log", o.roots.kernel_log, "Kernel log to scan")->capture_default_str();
  app.add_option("--udev-run-dir", o.roots.udev_run, "udev's runtime directory")
      ->capture_default_str();
  app.add_option("--compat", o.compat,
                 "Compatibility tables (driver/kernel, firmware); later ones take precedence")
      ->capture_default_str();
  app.add_flag("--once", o.once, "Bring up, then exit: 0 when ready, 1 otherwise");
  app.add_flag("--check-config", o.check_config,
               "Validate the config against this host and print the plan; change nothing");
  app.footer(
      "Exit codes: 0 ready (or plan printed); 1 not ready, or bad config; 2 bad usage.\n"
      "Netlink acts on the network namespace vfreadyd runs in.");
  CLI11_PARSE(app, argc, argv);

  spdlog::set_default_logger(spdlog::stderr_color_st("vfreadyd"));
  spdlog::set_pattern("%v");

  auto config = vfready::daemon::load_config(o.config);
  if (!config) {
    std::cerr << "vfreadyd: " << config.error().message << '\n';
    return 1;
  }
  auto table = vfready::daemon::load_compat_tables(o.compat);
  if (!table) {
    std::cerr << "vfreadyd: " << table.error().message << '\n';
    return 1;
  }
  if (o.check_config) {
    return vfready::daemon::print_plan(config.value(), table.value(), o.roots);
  }

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  const int signal_fd = signalfd(-1, &signals, SFD_CLOEXEC);

  vfready::host::SystemdNotifier notifier;
  const auto result =
      vfready::daemon::run_bringup(config.value(), table.value(), o.roots, notifier, signal_fd);
  if (!result.pfs.empty()) {
    vfready::daemon::print_summary(result);
  }
  if (o.once || result.interrupted || !result.ready_sent) {
    leave(result.ready_sent ? 0 : 1);
  }
  // Stays until told to stop; drift repair and the bus come with the service mode.
  notifier.notify("STATUS=" + std::string(vfready::model::to_string(result.outcome)) +
                  "; watching");
  signalfd_siginfo si{};
  while (read(signal_fd, &si, sizeof si) < 0) {
  }
  notifier.notify("STOPPING=1");
  leave(0);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "vfreadyd: " << e.what() << '\n';
    return 1;
  }
}
