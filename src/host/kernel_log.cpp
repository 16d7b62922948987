// SPDX-License-Identifier: Apache-2.0
// The kernel log's messages, as the host's read takes them (host_reader.hpp).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <string_view>
#include <vector>

#include "vfready/host/host_reader.hpp"

namespace vfready::host {

std::vector<std::string> read_kernel_log(const std::string& path) {
  std::vector<std::string> out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return out;
  }
  std::string pending;
  char buf[8192];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EPIPE)) {
      continue;  // EPIPE: records were overwritten while we read; go on from the next
    }
    if (n <= 0) {
      break;  // EAGAIN at the end of /dev/kmsg, 0 at the end of a file
    }
    pending.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  std::size_t start = 0;
  while (start < pending.size()) {
    auto end = pending.find('\n', start);
    if (end == std::string::npos) {
      end = pending.size();
    }
    const std::string_view line(pending.data() + start, end - start);
    start = end + 1;
    // Continuation lines (" KEY=value") carry device metadata, not messages.
    if (line.empty() || line.front() == ' ') {
      continue;
    }
    const auto semi = line.find(';');
    out.emplace_back(semi == std::string_view::npos ? line : line.substr(semi + 1));
  }
  return out;
}

}  // namespace vfready::host
