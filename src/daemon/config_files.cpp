// SPDX-License-Identifier: Apache-2.0
#include "config_files.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <system_error>
#include <thread>

#include "vfready/host/errno_name.hpp"

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

// Local disk and memory file systems: a read there never waits on a driver or a network.
// Anything else (sysfs, whose attributes a hung driver blocks; procfs; FUSE; NFS and
// other network file systems) is refused before it is read.
bool local_file_system(int fd) {
  struct statfs fs {};
  if (fstatfs(fd, &fs) != 0) {
    return false;
  }
  constexpr unsigned long kZfs = 0x2fc12fc1;  // not in linux/magic.h
  switch (static_cast<unsigned long>(fs.f_type)) {
    case EXT4_SUPER_MAGIC:  // ext2, ext3 and ext4 share it
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case TMPFS_MAGIC:
    case RAMFS_MAGIC:
    case OVERLAYFS_SUPER_MAGIC:
    case SQUASHFS_MAGIC:
    case F2FS_SUPER_MAGIC:
    case EROFS_SUPER_MAGIC_V1:
    case MSDOS_SUPER_MAGIC:
    case kZfs:
      return true;
    default:
      return false;
  }
}

// The whole of a regular file of at most kMaxFile bytes on a local file system. Opened
// without blocking, so that a FIFO (which would wait for a writer) is refused, not
// waited on.
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
  } else if (!local_file_system(fd)) {
    error = Error{path +
                  ": is not on a local file system (sysfs, procfs, FUSE or a network file "
                  "system, where a read can wait on a driver or a server); a configuration "
                  "must be a regular file on a local disk or tmpfs"};
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
  // Drop-ins are *.json; a name that begins with '.' is an editor's lock or backup file.
  fs::directory_iterator it(dropins, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (it->path().extension() == ".json" && !name.starts_with('.')) {
      names.push_back(it->path().string());
    }
  }
  if (ec && ec != std::errc::no_such_file_or_directory) {
    // A directory that is there and cannot be read (a symlink loop, EACCES, not a
    // directory) would drop settings silently.
    return Error{dropins.string() +
                 ": the drop-in directory cannot be read: " + host::errno_name(ec.value())};
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

Result<std::pair<model::Config, model::CompatTable>> load_config_within(
    const std::string& path, const std::vector<std::string>& compat_paths,
    std::chrono::milliseconds bound) {
  using Loaded = Result<std::pair<model::Config, model::CompatTable>>;
  // A reader left in the kernel (a file system that hangs past the checks above) is
  // abandoned; until it returns, no other is started.
  static std::atomic<bool> reading{false};
  if (reading.exchange(true)) {
    return Error{path +
                 ": an earlier read of the configuration has not returned; the "
                 "running configuration stays"};
  }
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    std::optional<Loaded> result;
  };
  auto shared = std::make_shared<Shared>();
  try {
    std::thread([shared, path, compat_paths] {
      Loaded loaded = Error{""};
      try {
        auto config = load_config(path);
        auto table =
            config ? load_compat_tables(compat_paths) : Result<model::CompatTable>(config.error());
        loaded = config && table
                     ? Loaded(std::pair(std::move(config).value(), std::move(table).value()))
                     : Loaded((config ? table.error() : config.error()));
      } catch (const std::exception& e) {
        loaded = Error{path + ": cannot be read: " + e.what()};
      }
      std::lock_guard lock(shared->mu);
      shared->result = std::move(loaded);
      reading = false;
      shared->cv.notify_all();
    }).detach();
  } catch (const std::system_error& e) {
    reading = false;  // no reader was started
    return Error{path + ": cannot start a reader of the configuration: " + e.what()};
  }
  std::unique_lock lock(shared->mu);
  if (!shared->cv.wait_for(lock, bound, [&] { return shared->result.has_value(); })) {
    return Error{path + ": reading the configuration did not finish within " +
                 std::to_string(bound.count()) + " ms (a file on a file system that hangs?)"};
  }
  return std::move(*shared->result);
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
