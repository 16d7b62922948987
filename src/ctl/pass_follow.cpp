// SPDX-License-Identifier: Apache-2.0
#include "pass_follow.hpp"

#include <unistd.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "commands.hpp"
#include "vfready/model/printable.hpp"
#include "vfready/model/status_json.hpp"

namespace vfready::ctl {

namespace {

bool progress_shown = false;

// Every problem of the status, with the PF or VF it is of.
void print_problems(const nlohmann::json& status) {
  for (const auto& p : status.value("problems", nlohmann::json::array())) {
    std::cerr << "vfreadyctl: problem: " << model::printable(p.get<std::string>()) << '\n';
  }
  for (const auto& pf : status.value("pfs", nlohmann::json::array())) {
    for (const auto& p : pf.value("problems", nlohmann::json::array())) {
      std::cerr << "vfreadyctl: problem [" << model::text_at(pf, "pci", "?")
                << "]: " << model::printable(p.get<std::string>()) << '\n';
    }
  }
}

}  // namespace

void show_progress(const std::string& text) {
  if (isatty(STDERR_FILENO) == 0) {
    return;
  }
  std::cerr << "\r\033[K" << model::printable(text) << std::flush;
  progress_shown = true;
}

void clear_progress() {
  if (progress_shown) {
    std::cerr << "\r\033[K" << std::flush;
    progress_shown = false;
  }
}

int follow_pass(bus::Client& client, uint64_t pass, Clock::time_point until, double timeout_s) {
  for (;;) {
    const auto status = nlohmann::json::parse(client.describe());
    const auto text = model::text_at(status, "status", "-");
    if (model::number_at(status, "passes_finished", uint64_t{0}) >= pass) {
      clear_progress();
      if (model::flag_at(status, "node_ready", false)) {
        std::cout << model::printable(text) << '\n';
        return kOk;
      }
      std::cerr << "vfreadyctl: not ready: " << model::text_at(status, "state", "-") << ": "
                << model::printable(text) << '\n';
      print_problems(status);
      return kFailed;
    }
    show_progress("pass " + std::to_string(pass) + ": " + text);
    if (Clock::now() >= until) {
      clear_progress();
      std::cerr << "vfreadyctl: pass " << pass << " has no outcome after " << timeout_s
                << " s: " << model::printable(text) << '\n';
      return kTimedOut;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace vfready::ctl
