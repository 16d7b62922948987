// SPDX-License-Identifier: Apache-2.0
#include "vfready/host/sysfs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "vfready/host/device_calls.hpp"
#include "vfready/host/errno_name.hpp"
#include "vfready/host/kernel_calls.hpp"

namespace vfready::host {

namespace {

// 0 and the attribute's value without its trailing newline, or the errno.
DeviceOpResult read_absolute(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return {errno, {}};
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
      return {err, {}};
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
  return {0, std::move(out)};
}

int write_absolute(const std::string& path, std::string_view value) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
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

}  // namespace

Result<std::string> RootedSysfs::read(const std::string& rel) {
  count(KernelCall::kSysfsRead);
  auto got = read_absolute(path(rel));
  if (got.err != 0) {
    return Error{path(rel) + ": " + errno_name(got.err)};
  }
  return std::move(got.text);
}

int RootedSysfs::write(const std::string& rel, std::string_view value) {
  count(KernelCall::kSysfsWrite);
  return write_absolute(path(rel), value);
}

namespace {

// The kernel calls of the first `made` of `ops`, by kind.
void count_made(const std::vector<DeviceOp>& ops, std::size_t made) {
  for (std::size_t i = 0; i < made && i < ops.size(); ++i) {
    count(ops[i].kind == DeviceOp::Kind::kRead ? KernelCall::kSysfsRead : KernelCall::kSysfsWrite);
  }
}

}  // namespace

std::vector<DeviceOpResult> RootedSysfs::on_device(const std::string& device,
                                                   std::vector<DeviceOp> ops,
                                                   std::chrono::milliseconds deadline) {
  std::vector<DeviceOpResult> out;
  if (calls_) {
    out = calls_->run(device, ops, deadline.count() == 0 ? read_deadline_ : deadline, root_);
  } else {
    for (const auto& op : ops) {
      const auto file = path(op.path);
      out.push_back(op.kind == DeviceOp::Kind::kRead
                        ? read_absolute(file)
                        : DeviceOpResult{write_absolute(file, op.value), {}});
      if (op.kind == DeviceOp::Kind::kWrite && out.back().err != 0) {
        break;
      }
    }
  }
  count_made(ops, out.size());  // a batch ends at its first failed write
  return out;
}

DeviceCallStart RootedSysfs::start_on_device(const std::string& device, std::vector<DeviceOp> ops,
                                             std::chrono::milliseconds deadline) {
  if (!calls_) {
    return {std::nullopt, on_device(device, std::move(ops), deadline)};
  }
  count_made(ops, ops.size());  // counted as sent: how many a started call makes is not known yet
  // Each path under the root as the request is made: no second copy of each.
  return calls_->start(device, ops, deadline.count() == 0 ? read_deadline_ : deadline, root_);
}

DeviceCallStart RootedSysfs::start_on_device_under(const std::string& device,
                                                   std::string_view under,
                                                   std::vector<DeviceOp> ops,
                                                   std::chrono::milliseconds deadline) {
  if (!calls_) {
    for (auto& op : ops) {
      op.path = std::string(under).append(1, '/').append(op.path);
    }
    return {std::nullopt, on_device(device, std::move(ops), deadline)};
  }
  count_made(ops, ops.size());  // as start_on_device() counts them
  std::string dir;
  dir.reserve(root_.size() + 1 + under.size());
  dir.append(root_).append(1, '/').append(under);
  return calls_->start(device, ops, deadline.count() == 0 ? read_deadline_ : deadline, dir);
}

std::vector<DeviceOpResult> RootedSysfs::finish_on_device(DeviceCalls::Pending call) {
  return calls_->finish(std::move(call));  // only a RootedSysfs with calls starts one
}

std::optional<StuckCall> RootedSysfs::stuck(const std::string& device) {
  return calls_ ? calls_->stuck(device) : std::nullopt;
}

bool RootedSysfs::exists(const std::string& rel) {
  count(KernelCall::kSysfsStat);
  struct stat st {};
  return ::lstat(path(rel).c_str(), &st) == 0;
}

std::vector<std::string> RootedSysfs::list(const std::string& rel) {
  count(KernelCall::kSysfsListing);
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
  count(KernelCall::kSysfsLink);
  char buf[4096];
  const ssize_t n = ::readlink(path(rel).c_str(), buf, sizeof buf - 1);
  if (n <= 0) {
    return std::nullopt;
  }
  const std::string target(buf, static_cast<std::size_t>(n));
  return target.substr(target.rfind('/') + 1);
}

}  // namespace vfready::host
