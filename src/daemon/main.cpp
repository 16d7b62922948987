// SPDX-License-Identifier: Apache-2.0
// vfreadyd: brings SR-IOV VFs of InfiniBand HCAs up before kubelet, then keeps them right.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "vfready/version.hpp"

namespace {

int run(int argc, char** argv) {
  CLI::App app{
      "vfreadyd: creates SR-IOV VFs on InfiniBand HCAs, gives them GUIDs and stable names,\n"
      "validates them and tells systemd READY=1 before kubelet starts; then keeps them right.",
      "vfreadyd"};
  app.set_version_flag("--version", std::string("vfreadyd ") + vfready::kVersion);
  CLI11_PARSE(app, argc, argv);
  std::cerr << "vfreadyd: the bring-up pipeline is not built yet; see --help\n";
  return 2;
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
