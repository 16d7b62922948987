// SPDX-License-Identifier: Apache-2.0
#include "measure.hpp"

#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <poll.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

namespace vfready::bench {

Launched::Launched(const std::string& command) {
  started_ = Clock::now();
  pid_ = fork();
  if (pid_ < 0) {
    throw std::runtime_error("fork failed");
  }
  if (pid_ == 0) {
    execl("/bin/bash", "bash", "-c", command.c_str(), nullptr);
    _exit(127);
  }
}

Launched::~Launched() {
  if (!reaped_) {
    kill(pid_, SIGKILL);
    wait(std::chrono::seconds(10));
  }
}

bool Launched::wait(std::chrono::milliseconds bound) {
  if (reaped_) {
    return true;
  }
  const int fd = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
  pollfd p{fd, POLLIN, 0};
  const bool exited = poll(&p, 1, static_cast<int>(bound.count())) == 1;
  close(fd);
  if (!exited) {
    return false;
  }
  int status = 0;
  wait4(pid_, &status, 0, &usage_);
  reaped_ = true;
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return true;
}

namespace {

double ms_of(const timeval& t) { return static_cast<double>(t.tv_sec) * 1e3 + t.tv_usec / 1e3; }

}  // namespace

double Launched::cpu_ms() const { return ms_of(usage_.ru_utime) + ms_of(usage_.ru_stime); }

double Launched::user_cpu_ms() const { return ms_of(usage_.ru_utime); }

double Launched::max_rss_mib() const { return static_cast<double>(usage_.ru_maxrss) / 1024.0; }

namespace {

// Busy and all ticks of every CPU so far (the "cpu" line of /proc/stat).
std::pair<uint64_t, uint64_t> cpu_ticks() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  uint64_t v[8] = {};  // user nice system idle iowait irq softirq steal
  in >> cpu;
  for (auto& x : v) {
    in >> x;
  }
  if (!in || cpu != "cpu") {
    return {0, 0};
  }
  const uint64_t busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  return {busy, busy + v[3] + v[4]};
}

}  // namespace

bool wait_for_quiet_cpus(std::chrono::milliseconds bound) {
  const auto until = Clock::now() + bound;
  constexpr auto kWindow = std::chrono::milliseconds(200);
  auto before = cpu_ticks();
  while (Clock::now() < until) {
    ::poll(nullptr, 0, static_cast<int>(kWindow.count()));  // the window itself
    const auto after = cpu_ticks();
    const uint64_t busy = after.first - before.first;
    const uint64_t all = after.second - before.second;
    if (all > 0 && busy * 20 <= all) {
      return true;
    }
    before = after;
  }
  return false;
}

double percentile(std::vector<double>& samples, double p) {
  if (samples.empty()) {
    return 0;
  }
  std::sort(samples.begin(), samples.end());
  const auto rank =
      static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(samples.size())));
  return samples[std::clamp<std::size_t>(rank, 1, samples.size()) - 1];
}

// A figure with a target is met when measured (a failed run gives -1) and within it.
bool met(const Figure& f) { return f.target && f.value >= 0 && f.value <= *f.target; }

void print_table(const std::vector<Figure>& figures) {
  std::string section;
  std::printf("%-44s %12s %-6s %12s  %s\n", "figure", "value", "unit", "target", "verdict");
  for (const auto& f : figures) {
    if (f.section != section) {
      section = f.section;
      std::printf("\n[%s]\n", section.c_str());
    }
    std::string target = "-";
    std::string verdict;
    if (f.target) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3f", *f.target);
      target = buf;
      verdict = met(f) ? "met" : f.value < 0 ? "MISSED (no measurement)" : "MISSED";
      verdict += " (" + f.basis + ")";
    } else if (!f.basis.empty()) {
      verdict = f.basis;
    }
    std::printf("%-44s %12.3f %-6s %12s  %s\n", f.name.c_str(), f.value, f.unit.c_str(),
                target.c_str(), verdict.c_str());
  }
}

std::string to_json(const std::vector<Figure>& figures, const std::string& machine) {
  auto out = nlohmann::json::array();
  for (const auto& f : figures) {
    nlohmann::json j = {{"section", f.section},
                        {"name", f.name},
                        {"value", f.value},
                        {"unit", f.unit},
                        {"basis", f.basis}};
    if (f.target) {
      j["target"] = *f.target;
      j["met"] = met(f);
    }
    out.push_back(j);
  }
  return nlohmann::json{{"machine", machine}, {"figures", out}}.dump(2);
}

}  // namespace vfready::bench
