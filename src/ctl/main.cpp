// SPDX-License-Identifier: Apache-2.0
// vfreadyctl: asks a running vfreadyd for its status over D-Bus, and tells it to act.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <exception>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "vfready/bus/bus.hpp"
#include "vfready/model/status_table.hpp"
#include "vfready/version.hpp"

namespace {

// Exit codes, as --help lists them.
constexpr int kOk = 0;
constexpr int kFailed = 1;
constexpr int kNotRunning = 3;
constexpr int kDenied = 4;

int code_of(const vfready::bus::ClientError& e) {
  switch (e.kind()) {
    case vfready::bus::ClientError::Kind::kNotRunning:
      return kNotRunning;
    case vfready::bus::ClientError::Kind::kAccessDenied:
      return kDenied;
    default:
      return kFailed;
  }
}

int run(int argc, char** argv) {
  CLI::App app{"vfreadyctl: query and control vfreadyd, the SR-IOV VF bring-up daemon.",
               "vfreadyctl"};
  app.set_version_flag("--version", std::string("vfreadyctl ") + vfready::kVersion);
  app.require_subcommand(1);
  std::string address;
  app.add_option("--bus-address", address,
                 "D-Bus address of vfreadyd (default: the system bus, or "
                 "$DBUS_SYSTEM_BUS_ADDRESS)");
  bool json = false;
  bool no_colour = false;
  app.add_flag("--no-color", no_colour, "No colours, even on a terminal");
  auto* status = app.add_subcommand("status", "PFs, VFs, names, GUIDs, link state and problems");
  status->add_flag("--json", json, "The whole status as JSON (as Describe() returns it)");
  std::string key;
  auto* describe = app.add_subcommand("describe", "One PF with its steps and VFs");
  describe->add_option("PF", key, "PCI address or name of a PF or one of its VFs")->required();
  describe->add_flag("--json", json, "As JSON");
  auto* reconcile = app.add_subcommand("reconcile", "Bring every PF to its target again (root)");
  auto* reload = app.add_subcommand(
      "reload",
      "Re-read the configuration (root) and wait until it is in force: at once, or when the "
      "running pass ends");
  double timeout_s = 300;
  reload->add_option("--timeout", timeout_s, "Seconds to wait for it to be in force")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.footer(
      "Exit codes: 0 done; 1 the daemon refused or failed; 2 bad usage;\n"
      "3 vfreadyd is not running (or the bus is not reachable); 4 access denied.");
  CLI11_PARSE(app, argc, argv);
  const bool colour = !no_colour && isatty(STDOUT_FILENO) != 0;

  try {
    auto client = vfready::bus::Client::connect(address);
    if (status->parsed()) {
      const auto text = client->describe();
      if (json) {
        std::cout << nlohmann::json::parse(text).dump(2) << '\n';
      } else {
        std::cout << vfready::model::render_status(nlohmann::json::parse(text), colour);
      }
    } else if (describe->parsed()) {
      const auto text = client->describe_pf(key);
      if (json) {
        std::cout << nlohmann::json::parse(text).dump(2) << '\n';
      } else {
        std::cout << vfready::model::render_pf(nlohmann::json::parse(text), colour);
      }
    } else if (reconcile->parsed()) {
      client->reconcile();
      std::cout << "reconcile started\n";
    } else if (reload->parsed()) {
      const auto before = client->config_generation();
      client->reload();  // a refused configuration throws here, with the reason
      const auto until = std::chrono::steady_clock::now() +
                         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double>(timeout_s));
      // In force at once, or when the running pass ends: its generation tells.
      while (client->config_generation() == before) {
        if (std::chrono::steady_clock::now() >= until) {
          std::cerr << "vfreadyctl: the new configuration was read, but is not in force after "
                    << timeout_s << " s: a pass is still running (vfreadyctl status)\n";
          return kFailed;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      std::cout << "configuration reloaded and in force\n";
    }
  } catch (const vfready::bus::ClientError& e) {
    std::cerr << "vfreadyctl: " << e.what() << '\n';
    return code_of(e);
  }
  return kOk;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "vfreadyctl: " << e.what() << '\n';
    return kFailed;
  }
}
