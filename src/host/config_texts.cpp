// SPDX-License-Identifier: Apache-2.0
// The files of vfready's configuration read as text, each refused unless it is a
// regular file on a local file system.
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>

#include "vfready/host/config_texts.hpp"
#include "vfready/host/errno_name.hpp"

namespace vfready::host {

namespace fs = std::filesystem;

namespace {

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

// The whole of a regular file of at most kMaxConfigFile bytes on a local file system. Opened
// without blocking, so that a FIFO (which would wait for a writer) is refused, not
// waited on.
Result<std::string> slurp(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    return Error{path + ": cannot be read: " + errno_name(errno)};
  }
  struct stat st {};
  std::string out;
  std::optional<Error> error;
  if (fstat(fd, &st) != 0) {
    error = Error{path + ": cannot be read: " + errno_name(errno)};
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
        error = Error{path + ": cannot be read: " + errno_name(errno)};
        break;
      }
      if (n == 0) {
        break;
      }
      out.append(buf, static_cast<std::size_t>(n));
      if (out.size() > kMaxConfigFile) {
        error = Error{path + ": is larger than " + std::to_string(kMaxConfigFile) +
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

Result<std::vector<model::ConfigSource>> read_config_files(const std::string& path) {
  std::vector<model::ConfigSource> sources;
  auto main = slurp(path);
  if (!main) {
    return main.error();
  }
  sources.push_back({path, std::move(main).value()});
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
                 ": the drop-in directory cannot be read: " + errno_name(ec.value())};
  }
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    auto text = slurp(name);
    if (!text) {
      return text.error();
    }
    sources.push_back({name, std::move(text).value()});
  }
  return sources;
}

Result<std::vector<model::ConfigSource>> read_table_files(const std::vector<std::string>& paths) {
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
    sources.push_back({path, std::move(text).value()});
  }
  return sources;
}

Result<ConfigTexts> read_config_texts(const std::string& path,
                                      const std::vector<std::string>& table_paths) {
  auto config = read_config_files(path);
  if (!config) {
    return config.error();
  }
  auto tables = read_table_files(table_paths);
  if (!tables) {
    return tables.error();
  }
  return ConfigTexts{std::move(config).value(), std::move(tables).value()};
}

}  // namespace vfready::host
