// SPDX-License-Identifier: Apache-2.0
#include "netns.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "errno_text.hpp"

namespace vfready::fakehost {

namespace {

constexpr const char* kRunDir = "/run/netns";
constexpr const char* kOwnerDir = "/run/vfready-fakehost";

std::string owner_file(const std::string& name) { return std::string(kOwnerDir) + "/" + name; }

std::runtime_error sys_error(const std::string& what) {
  return std::runtime_error(what + ": " + errno_text(errno));
}

// As iproute2 does: /run/netns is a shared mount, so namespaces mounted in it
// propagate into mount namespaces made later (ip netns exec).
void prepare_run_dir() {
  mkdir(kRunDir, 0755);
  if (mount("", kRunDir, "none", MS_SHARED | MS_REC, nullptr) == 0) {
    return;
  }
  if (errno != EINVAL || mount(kRunDir, kRunDir, "none", MS_BIND | MS_REC, nullptr) != 0 ||
      mount("", kRunDir, "none", MS_SHARED | MS_REC, nullptr) != 0) {
    throw sys_error(std::string("cannot make ") + kRunDir + " a shared mount");
  }
}

bool owner_is_dead(const std::string& name) {
  std::ifstream in(owner_file(name));
  pid_t pid = 0;
  if (!(in >> pid) || pid <= 0) {
    return false;
  }
  return kill(pid, 0) != 0 && errno == ESRCH;
}

void unmount_and_unlink(const std::string& path) {
  umount2(path.c_str(), MNT_DETACH);
  unlink(path.c_str());
}

}  // namespace

std::string NamedNetns::path_of(const std::string& name) {
  return std::string(kRunDir) + "/" + name;
}

NamedNetns::NamedNetns(std::string name) : name_(std::move(name)) {
  if (name_.empty() || name_.find('/') != std::string::npos || name_ == "." || name_ == "..") {
    throw std::runtime_error("invalid network namespace name \"" + name_ + "\"");
  }
  prepare_run_dir();
  const auto path = path_of(name_);
  if (access(path.c_str(), F_OK) == 0) {
    if (!owner_is_dead(name_)) {
      throw std::runtime_error("network namespace " + name_ +
                               " exists and no dead fake host left it: pick another --netns or "
                               "remove it with `ip netns del " +
                               name_ + "`");
    }
    unmount_and_unlink(path);
  }
  const int fd = open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL, 0);
  if (fd < 0) {
    throw sys_error("cannot create " + path);
  }
  close(fd);

  // A thread of our own enters a new namespace and pins it under the name; the
  // process's other threads stay where they were.
  int err = 0;
  std::thread([&] {
    if (unshare(CLONE_NEWNET) != 0 ||
        mount("/proc/thread-self/ns/net", path.c_str(), "none", MS_BIND, nullptr) != 0) {
      err = errno;
    }
  }).join();
  if (err != 0) {
    unlink(path.c_str());
    errno = err;
    throw sys_error("cannot create network namespace " + name_);
  }
  fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    const auto e = sys_error("cannot open " + path);
    unmount_and_unlink(path);
    throw e;
  }
  mkdir(kOwnerDir, 0755);
  std::ofstream(owner_file(name_)) << getpid() << '\n';
}

NamedNetns::~NamedNetns() { remove(); }

void NamedNetns::remove() {
  if (fd_ < 0) {
    return;
  }
  close(fd_);
  fd_ = -1;
  unmount_and_unlink(path_of(name_));
  unlink(owner_file(name_).c_str());
}

}  // namespace vfready::fakehost
