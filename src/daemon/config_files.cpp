// SPDX-License-Identifier: Apache-2.0
#include "config_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "vfready/host/sysfs.hpp"

namespace vfready::daemon {

namespace fs = std::filesystem;

namespace {

// A configuration is at most this big: anything larger is not one (a symlink to
// /dev/zero, a log file given by mistake).
constexpr std::size_t kMaxFile = std::size_t{1024} * 1024;

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) {
    return "a directory";
  }
  if (S_ISFIFO(mode)) {
    return "a FIFO";
  }
  if (S_ISCHR(mode) || S_ISBLK(mode)) {
    return "a device";
  }
  if (S_ISSOCK(mode)) {
    return "a socket";
  }
  return "not a regular file";
}

// The whole of a regular file of at most kMaxFile bytes. Opened without blocking, so
// that a FIFO (which would wait for a writer) is refused, not waited on.
Result<std::string> slurp(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    return Error{path + ": cannot be read: " + host::errno_name(errno)};
  }
  struct stat st {};
  std::string out;
  std::optional<Error> error;
  if (fstat(fd, &st) != 0) {
    error = Error{path + ": cannot be read: " + host::errno_name(errno)};
  } else if (!S_ISREG(st.st_mode)) {
    error =
        Error{path + ": is " + kind_of(st.st_mode) + "; a configuration must be a regular file"};
  } else {
    char buf[65536];
    for (;;) {
      const ssize_t n = read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n < 0) {
        error = Error{path + ": cannot be read: " + host::errno_name(errno)};
        break;
      }
      if (n == 0) {
        break;
      }
      out.append(buf, static_cast<std::size_t>(n));
      if (out.size() > kMaxFile) {
        error = Error{path + ": is larger than " + std::to_string(kMaxFile) +
                      " bytes; a configuration is far smaller"};
        break;
      }
    }
  }
  close(fd);
  if (error) {
    return *error;
  }
  return out;
}

}  // namespace

Result<model::Config> load_config(const std::string& path) {
  std::vector<model::ConfigSource> sources;
  auto main = slurp(path);
  if (!main) {
    return main.error();
  }
  sources.push_back({path, main.value()});
  const auto dropins = fs::path(path).parent_path() / "vfready.d";
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dropins, ec)) {
    if (entry.path().extension() == ".json") {
      names.push_back(entry.path().string());
    }
  }
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    auto text = slurp(name);
    if (!text) {
      return text.error();
    }
    sources.push_back({name, text.value()});
  }
  return model::parse_config(sources);
}

Result<model::CompatTable> load_compat_tables(const std::vector<std::string>& paths) {
  std::vector<model::ConfigSource> sources;
  for (const auto& path : paths) {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      continue;
    }
    auto text = slurp(path);
    if (!text) {
      return text.error();
    }
    sources.push_back({path, text.value()});
  }
  return model::parse_compat_table(sources);
}

}  // namespace vfready::daemon
