// SPDX-License-Identifier: Apache-2.0
#include "vfready/pipeline/task.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <system_error>

namespace vfready::pipeline {

void wait_for(const Wait& wait) {
  std::vector<pollfd> fds;
  fds.reserve(wait.fds.size());
  for (const int fd : wait.fds) {
    fds.push_back({fd, POLLIN, 0});
  }
  int timeout = -1;
  if (wait.until != Wait::Clock::time_point::max()) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(wait.until - Wait::Clock::now()).count();
    timeout = static_cast<int>(std::clamp<int64_t>(left, 0, 60'000));
  } else if (fds.empty()) {
    throw std::logic_error("a pass waits on nothing, forever");
  }
  if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) {
    throw std::system_error(errno, std::generic_category(), "poll");
  }
}

bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

}  // namespace vfready::pipeline
