// SPDX-License-Identifier: Apache-2.0
// vfreadyctl: asks vfreadyd for its status over D-Bus (or reads the status file it left),
// tells it to act, waits for it, and renders the cluster's configs from what it did.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iostream>

#include "commands.hpp"
#include "vfready/version.hpp"

namespace {

using namespace vfready;

// The first word that is neither an option nor an option's value: the command, as the
// user typed it ("" when there is none).
std::string command_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    if (word == "--bus-address" || word == "--status-file") {
      ++i;  // its value
    } else if (!word.starts_with("-")) {
      return word;
    }
  }
  return "";
}

// https://no-color.org: set and not empty turns colours off.
bool no_color_env() {
  const char* v = std::getenv("NO_COLOR");  // NOLINT(concurrency-mt-unsafe): no threads yet
  return v != nullptr && *v != '\0';
}

int run(int argc, char** argv) {
  CLI::App app{"vfreadyctl: query and control vfreadyd, the SR-IOV VF bring-up daemon.",
               "vfreadyctl"};
  app.set_version_flag("--version", std::string("vfreadyctl ") + kVersion);
  app.require_subcommand(1);
  app.fallthrough();  // the options below may follow the command
  ctl::Where where{"", "/run/vfready/status.json"};
  ctl::Output out;
  bool no_colour = false;
  app.add_option("--bus-address", where.bus_address,
                 "D-Bus address of vfreadyd (default: the system bus, or "
                 "$DBUS_SYSTEM_BUS_ADDRESS)");
  app.add_option("--status-file", where.status_file,
                 "The status file vfreadyd writes, read when it is not running")
      ->capture_default_str();
  app.add_flag("--no-color", no_colour, "No colours, even on a terminal (as NO_COLOR=1 does)");

  auto* status = app.add_subcommand("status", "One line per PF: state, VFs, names, problems");
  status->add_flag("--json", out.json, "The whole status as JSON (as Describe() returns it)");
  status->add_option("-o,--output", out.format, "table, json (as --json) or yaml")
      ->check(CLI::IsMember({"table", "json", "yaml"}))
      ->capture_default_str();
  status->add_flag("--vfs", out.vfs, "Each VF's line too: address, name, GUID, state");
  std::string key;
  auto* describe = app.add_subcommand("describe", "One PF with its steps and VFs");
  describe
      ->add_option("PF", key,
                   "A PF's PCI address or name (given, configured or the kernel's), or one of "
                   "its VFs' address or name")
      ->required();
  describe->add_flag("--json", out.json, "As JSON");
  describe->add_option("-o,--output", out.format, "table, json (as --json) or yaml")
      ->check(CLI::IsMember({"table", "json", "yaml"}))
      ->capture_default_str();
  double wait_s = 60;
  auto* wait =
      app.add_subcommand("wait", "Wait until the node is ready (for init containers and scripts)");
  wait->add_option("--timeout", wait_s, "Seconds to wait")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  auto* reconcile = app.add_subcommand(
      "reconcile",
      "Bring every PF to its target again (root): a pass now, or when the running one ends");
  bool reconcile_wait = false;
  double reconcile_s = 300;
  reconcile->add_flag("--wait", reconcile_wait,
                      "Wait for the pass's outcome, showing its progress: exit 0 when the node "
                      "is ready after it");
  reconcile->add_option("--timeout", reconcile_s, "Seconds to wait with --wait")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  double reload_s = 300;
  auto* reload = app.add_subcommand(
      "reload",
      "Re-read the configuration (root) and wait until it is in force: at once, or when the "
      "running pass ends");
  reload->add_option("--timeout", reload_s, "Seconds to wait for it to be in force")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  bool reload_wait = false;
  reload->add_flag("--wait", reload_wait,
                   "Wait for the outcome of the pass that applies it too, showing its progress");
  std::string target;
  model::ClusterConfigOptions render_options;
  auto* render = app.add_subcommand(
      "render", "Print a cluster agent's config derived from what vfready brought up");
  render
      ->add_option("TARGET", target,
                   "sriov-device-plugin, rdma-shared-device-plugin or sriov-network-node-policy")
      ->required()
      ->check(CLI::IsMember(
          {"sriov-device-plugin", "rdma-shared-device-plugin", "sriov-network-node-policy"}));
  render->add_option("--resource-name", render_options.resource_name,
                     "Kubernetes resource name (default: ib_vfs; rdma_shared_ib for the RDMA "
                     "shared device plugin)");
  render->add_option("--resource-prefix", render_options.resource_prefix,
                     "Resource prefix (default: nvidia.com for the SR-IOV device plugin)");
  render->add_option("--namespace", render_options.ns,
                     "Namespace of the SriovNetworkNodePolicy (default: sriov-network-operator) "
                     "or of the ConfigMap (default: kube-system)");
  render->add_option("--configmap", render_options.configmap,
                     "Wrap a device plugin's config.json in a ConfigMap of this name");
  app.footer(
      "Without vfreadyd on the bus, status, describe, wait and render read the status file.\n"
      "Exit codes: 0 done (wait: ready); 1 refused or failed (wait: the bring-up failed);\n"
      "2 bad usage; 3 vfreadyd is not running and left no status file; 4 access denied;\n"
      "5 wait, reconcile --wait, reload --wait: no outcome in time.");
  const auto commands = app.get_subcommands([](const CLI::App*) { return true; });
  if (const auto word = command_word(argc, argv);
      !word.empty() && std::none_of(commands.begin(), commands.end(),
                                    [&](const CLI::App* c) { return c->get_name() == word; })) {
    std::cerr << "vfreadyctl: unknown command '" << word
              << "' (valid: status, describe, wait, reconcile, reload, render; see --help)\n";
    return ctl::kUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? ctl::kOk : ctl::kUsage;
  }
  out.colour = !no_colour && !no_color_env() && isatty(STDOUT_FILENO) != 0;

  if (status->parsed()) {
    return ctl::status(where, out);
  }
  if (describe->parsed()) {
    return ctl::describe(where, key, out);
  }
  if (wait->parsed()) {
    return ctl::wait(where, wait_s);
  }
  if (reconcile->parsed()) {
    return ctl::reconcile(where, reconcile_wait, reconcile_s);
  }
  if (reload->parsed()) {
    return ctl::reload(where, reload_s, reload_wait);
  }
  return ctl::render(where, target, render_options);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "vfreadyctl: " << e.what() << '\n';
    return vfready::ctl::kFailed;
  }
}
