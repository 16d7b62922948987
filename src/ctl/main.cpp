// SPDX-License-Identifier: Apache-2.0
// vfreadyctl: asks a running vfreadyd for its status over D-Bus.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "vfready/version.hpp"

namespace {

int run(int argc, char** argv) {
  CLI::App app{"vfreadyctl: query and control vfreadyd, the SR-IOV VF bring-up daemon.",
               "vfreadyctl"};
  app.set_version_flag("--version", std::string("vfreadyctl ") + vfready::kVersion);
  app.require_subcommand(1);
  app.add_subcommand("status", "Show PFs, VFs, names, GUIDs and problems");
  CLI11_PARSE(app, argc, argv);
  std::cerr << "vfreadyctl: the status API is not built yet\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "vfreadyctl: " << e.what() << '\n';
    return 1;
  }
}
