// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

// What the benchmarks measure and how they print it.
namespace vfready::bench {

using Clock = std::chrono::steady_clock;

// A figure of one run, with the target it is held to (if any).
struct Figure {
  std::string section;
  std::string name;
  double value = 0;
  std::string unit;
  std::optional<double> target;  // value must be at most this
  std::string basis;             // what the target is made of
};
bool met(const Figure& f);

// A process started by `bash -c <command>` (which should exec what it measures), reaped
// with its resource usage.
class Launched {
 public:
  explicit Launched(const std::string& command);
  ~Launched();
  Launched(const Launched&) = delete;
  Launched& operator=(const Launched&) = delete;
  [[nodiscard]] pid_t pid() const { return pid_; }
  [[nodiscard]] Clock::time_point started() const { return started_; }
  // Waits for the exit; false past `bound`. Then exit_code() and usage() hold.
  bool wait(std::chrono::milliseconds bound);
  [[nodiscard]] int exit_code() const { return exit_code_; }
  // CPU time (user + system) of the process and the children it waited for.
  [[nodiscard]] double cpu_ms() const;
  // The user part of it: the process's own code, without the kernel's work for it.
  [[nodiscard]] double user_cpu_ms() const;
  // Peak resident set size.
  [[nodiscard]] double max_rss_mib() const;

 private:
  pid_t pid_ = -1;
  Clock::time_point started_;
  bool reaped_ = false;
  int exit_code_ = -1;
  rusage usage_{};
};

// Waits until the CPUs are quiet (busy at most 5% of a 200 ms window, /proc/stat): what
// the run before left running (the kernel tearing down a namespace of 2,000 netdevs holds
// the RTNL lock for a second and more) is not charged to the next run. False at `bound`.
bool wait_for_quiet_cpus(std::chrono::milliseconds bound);

// p-th percentile (0..100) of `samples` (sorted in place).
double percentile(std::vector<double>& samples, double p);

void print_table(const std::vector<Figure>& figures);
std::string to_json(const std::vector<Figure>& figures, const std::string& machine);

}  // namespace vfready::bench
