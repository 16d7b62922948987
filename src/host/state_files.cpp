// SPDX-License-Identifier: Apache-2.0
#include "vfready/host/state_files.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>

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

// 16 hex digits from the kernel's random pool (never blocks once the pool is ready,
// which it is long before vfreadyd starts).
std::string random_suffix() {
  uint64_t bits = 0;
  if (getrandom(&bits, sizeof bits, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof bits)) {
    bits = static_cast<uint64_t>(getpid()) << 32 ^
           static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (auto& c : out) {
    c = kDigits[bits & 0xf];
    bits >>= 4;
  }
  return out;
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
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) {
    return errno;
  }
  if ((st.st_mode & S_IWOTH) != 0 && (st.st_mode & S_ISVTX) == 0) {
    return kDirectoryWritableByOthers;
  }
  // A dotfile (readers that take every file of the directory, NFD and node_exporter's
  // *.prom, skip it) with a random name, created here or not at all.
  std::string temp;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    temp = dir + "/." + name + "." + random_suffix();
    fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
              static_cast<mode_t>(mode));
    if (fd < 0 && errno != EEXIST) {
      return errno;
    }
  }
  if (fd < 0) {
    return EEXIST;
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
