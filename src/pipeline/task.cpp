// SPDX-License-Identifier: Apache-2.0
#include "vfready/pipeline/task.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <system_error>

namespace vfready::pipeline {

int poll_timeout(Wait::Clock::time_point until) {
  if (until == Wait::Clock::time_point::max()) {
    return -1;
  }
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - Wait::Clock::now());
  return static_cast<int>(std::clamp<int64_t>(left.count(), 0, 60'000));
}

void wait_for(const Wait& wait) {
  std::vector<pollfd> fds;
  fds.reserve(wait.fds.size());
  for (const int fd : wait.fds) {
    fds.push_back({fd, POLLIN, 0});
  }
  if (wait.until == Wait::Clock::time_point::max() && fds.empty()) {
    throw std::logic_error("a pass waits on nothing, forever");
  }
  if (::poll(fds.data(), fds.size(), poll_timeout(wait.until)) < 0 && errno != EINTR) {
    throw std::system_error(errno, std::generic_category(), "poll");
  }
}

bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

bool came(const Wait& wait, Wait::Clock::time_point now) {
  return now >= wait.until || std::any_of(wait.fds.begin(), wait.fds.end(), readable);
}

}  // namespace vfready::pipeline
