// SPDX-License-Identifier: Apache-2.0
#include "vfready/host/sysfs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace vfready::host {

std::string errno_name(int err) {
  char buf[128];
  std::string text = strerror_r(err, buf, sizeof buf);  // GNU: returns the message
  if (const char* name = strerrorname_np(err)) {
    text += std::string(" (") + name + ")";
  }
  return text;
}

Result<std::string> RootedSysfs::read(const std::string& rel) {
  const int fd = ::open(path(rel).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Error{path(rel) + ": " + errno_name(errno)};
  }
  std::string out;
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return Error{path(rel) + ": " + errno_name(err)};
    }
    out.append(buf, static_cast<std::size_t>(n));
    // A sysfs attribute comes whole in one read (its show() fills at most a page); a
    // short read is the end, and asking again would be one more round trip.
    if (static_cast<std::size_t>(n) < sizeof buf) {
      break;
    }
  }
  ::close(fd);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\0')) {
    out.pop_back();
  }
  return out;
}

namespace {

// Writes from a child process and waits for it. A driver that never finishes the
// write leaves only the child stuck (in D state, unkillable): the daemon's own thread
// can be abandoned and the daemon can still exit, which it could not with one of its
// threads inside the kernel.
int write_in_child(const std::string& path, std::string_view value) {
  const pid_t child = ::fork();
  if (child < 0) {
    return errno;
  }
  if (child == 0) {
    // Only async-signal-safe calls here: the parent has other threads.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      ::_exit(errno);
    }
    const ssize_t n = ::write(fd, value.data(), value.size());
    ::_exit(n < 0 ? errno : 0);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) {
      return errno;
    }
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : EINTR;
}

}  // namespace

int RootedSysfs::write(const std::string& rel, std::string_view value, WriteIn where) {
  if (where == WriteIn::kChild) {
    return write_in_child(path(rel), value);
  }
  const int fd = ::open(path(rel).c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    return errno;
  }
  // One write(2) per value: sysfs stores take the whole buffer at once.
  ssize_t n = 0;
  do {
    n = ::write(fd, value.data(), value.size());
  } while (n < 0 && errno == EINTR);
  const int err = n < 0 ? errno : 0;
  ::close(fd);
  return err;
}

bool RootedSysfs::exists(const std::string& rel) {
  struct stat st {};
  return ::lstat(path(rel).c_str(), &st) == 0;
}

std::vector<std::string> RootedSysfs::list(const std::string& rel) {
  std::vector<std::string> out;
  DIR* dir = ::opendir(path(rel).c_str());
  if (dir == nullptr) {
    return out;
  }
  while (const dirent* e = ::readdir(dir)) {  // NOLINT(concurrency-mt-unsafe): own DIR*
    const std::string name = e->d_name;
    if (name != "." && name != "..") {
      out.push_back(name);
    }
  }
  ::closedir(dir);
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::string> RootedSysfs::link_target_name(const std::string& rel) {
  char buf[4096];
  const ssize_t n = ::readlink(path(rel).c_str(), buf, sizeof buf - 1);
  if (n <= 0) {
    return std::nullopt;
  }
  const std::string target(buf, static_cast<std::size_t>(n));
  return target.substr(target.rfind('/') + 1);
}

}  // namespace vfready::host
