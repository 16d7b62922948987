// SPDX-License-Identifier: Apache-2.0
#include "vfready/host/state_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace vfready::host {

namespace {

int write_all(int fd, std::string_view content) {
  while (!content.empty()) {
    const ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return errno;
    }
    content.remove_prefix(static_cast<std::size_t>(n));
  }
  return 0;
}

}  // namespace

int write_file_atomically(const std::string& path, std::string_view content, unsigned mode,
                          bool make_dir) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (make_dir) {
    if (mkdir(dir.c_str(), 0755) == 0) {
      // Readable by everyone whatever the umask (the unit's is 0077): vfreadyctl runs as
      // any user.
      static_cast<void>(chmod(dir.c_str(), 0755));
    } else if (errno != EEXIST) {
      return errno;
    }
  }
  // A dotfile: readers that take every file of the directory (NFD, node_exporter's *.prom)
  // skip it.
  const std::string temp = dir + "/." + name + "." + std::to_string(getpid());
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                      static_cast<mode_t>(mode));
  if (fd < 0) {
    return errno;
  }
  int err = write_all(fd, content);
  if (err == 0 && fchmod(fd, static_cast<mode_t>(mode)) != 0) {
    err = errno;  // the umask must not decide who may read it
  }
  if (close(fd) != 0 && err == 0) {
    err = errno;
  }
  if (err == 0 && rename(temp.c_str(), path.c_str()) != 0) {
    err = errno;
  }
  if (err != 0) {
    unlink(temp.c_str());
  }
  return err;
}

}  // namespace vfready::host
