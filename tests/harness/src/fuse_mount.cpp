// SPDX-License-Identifier: Apache-2.0
#define FUSE_USE_VERSION 312
#include "fuse_mount.hpp"

#include <fuse3/fuse.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace vfready::fakehost {

namespace {

const Tree& tree_of() { return *static_cast<const Tree*>(fuse_get_context()->private_data); }

// sysfs reports every attribute as 4096 bytes long, whatever it holds.
constexpr off_t kAttributeSize = 4096;

void fill_stat(const Tree::Entry& e, struct stat* st) {
  std::memset(st, 0, sizeof *st);
  switch (e.kind) {
    case Tree::Kind::kDir:
      st->st_mode = S_IFDIR | e.mode;
      st->st_nlink = 2;
      break;
    case Tree::Kind::kFile:
      st->st_mode = S_IFREG | e.mode;
      st->st_nlink = 1;
      st->st_size = kAttributeSize;
      break;
    case Tree::Kind::kLink:
      st->st_mode = S_IFLNK | 0777;
      st->st_nlink = 1;
      st->st_size = static_cast<off_t>(e.link_target.size());
      break;
  }
}

void* op_init(struct fuse_conn_info* /*conn*/, struct fuse_config* cfg) {
  // Everything changes behind the kernel's back (renames, new VFs). Names that exist
  // may be cached, which makes path walks cheap: every stat, open and readdir still
  // comes here by path (attributes and misses are never cached), so a removed or
  // renamed entry answers ENOENT at once and a new one is found at once.
  cfg->entry_timeout = 3600;
  cfg->attr_timeout = 0;
  cfg->negative_timeout = 0;
  cfg->direct_io = 1;
  cfg->kernel_cache = 0;
  cfg->hard_remove = 1;
  return fuse_get_context()->private_data;
}

int op_getattr(const char* path, struct stat* st, struct fuse_file_info* /*fi*/) {
  auto e = tree_of().stat(path);
  if (!e) {
    return -ENOENT;
  }
  fill_stat(*e, st);
  return 0;
}

int op_readlink(const char* path, char* buf, size_t size) {
  auto e = tree_of().stat(path);
  if (!e) {
    return -ENOENT;
  }
  if (e->kind != Tree::Kind::kLink) {
    return -EINVAL;
  }
  if (size == 0) {
    return -EINVAL;
  }
  const auto n = std::min(size - 1, e->link_target.size());
  for (std::size_t i = 0; i < n; ++i) {
    buf[i] = e->link_target[i];
  }
  buf[n] = '\0';
  return 0;
}

int op_readdir(const char* path, void* buf, fuse_fill_dir_t fill, off_t /*offset*/,
               struct fuse_file_info* /*fi*/, enum fuse_readdir_flags /*flags*/) {
  auto e = tree_of().stat(path);
  if (!e) {
    return -ENOENT;
  }
  if (e->kind != Tree::Kind::kDir) {
    return -ENOTDIR;
  }
  fill(buf, ".", nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
  fill(buf, "..", nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
  for (const auto& name : tree_of().list(path)) {
    fill(buf, name.c_str(), nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
  }
  return 0;
}

int op_open(const char* path, struct fuse_file_info* fi) {
  auto e = tree_of().stat(path);
  if (!e) {
    return -ENOENT;
  }
  if (e->kind == Tree::Kind::kDir) {
    return -EISDIR;
  }
  const int acc = fi->flags & O_ACCMODE;
  // As kernfs: opening for an access the attribute has no handler for is EACCES.
  if ((acc != O_WRONLY && !e->attr->read) || (acc != O_RDONLY && !e->attr->write)) {
    return -EACCES;
  }
  fi->direct_io = 1;
  fi->nonseekable = 0;
  return 0;
}

int op_read(const char* path, char* buf, size_t size, off_t offset, struct fuse_file_info* /*fi*/) {
  auto e = tree_of().stat(path);
  if (!e || e->kind != Tree::Kind::kFile) {
    return -ENOENT;
  }
  const std::string value = e->attr->read();
  if (offset < 0 || static_cast<size_t>(offset) >= value.size()) {
    return 0;
  }
  const auto n = std::min(size, value.size() - static_cast<size_t>(offset));
  // read(2) data is not a C string: no terminator belongs here.
  std::memcpy(buf, value.data() + offset, n);  // NOLINT(bugprone-not-null-terminated-result)
  return static_cast<int>(n);
}

int op_write(const char* path, const char* buf, size_t size, off_t /*offset*/,
             struct fuse_file_info* /*fi*/) {
  auto e = tree_of().stat(path);
  if (!e || e->kind != Tree::Kind::kFile) {
    return -ENOENT;
  }
  if (!e->attr->write) {
    return -EACCES;
  }
  const int err = e->attr->write(std::string_view(buf, size));
  return err == 0 ? static_cast<int>(size) : -err;
}

// `echo x > attr` opens with O_TRUNC; sysfs ignores the truncation.
int op_truncate(const char* path, off_t /*size*/, struct fuse_file_info* /*fi*/) {
  return tree_of().stat(path) ? 0 : -ENOENT;
}

const fuse_operations kOperations = [] {
  fuse_operations ops{};
  ops.init = op_init;
  ops.getattr = op_getattr;
  ops.readlink = op_readlink;
  ops.readdir = op_readdir;
  ops.open = op_open;
  ops.read = op_read;
  ops.write = op_write;
  ops.truncate = op_truncate;
  return ops;
}();

}  // namespace

FuseMount::FuseMount(const Tree& tree, std::string mountpoint)
    : tree_(tree), mountpoint_(std::move(mountpoint)) {}

FuseMount::~FuseMount() { stop(); }

void FuseMount::start() {
  std::vector<std::string> argv_storage = {"vfready-fakehost",
                                           "-o",
                                           "allow_other",
                                           "-o",
                                           "default_permissions",
                                           "-o",
                                           "fsname=vfready-fakehost,subtype=sysfs"};
  std::vector<char*> argv;
  argv.reserve(argv_storage.size());
  for (auto& a : argv_storage) {
    argv.push_back(a.data());
  }
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());
  fuse_ = fuse_new(&args, &kOperations, sizeof kOperations,
                   const_cast<Tree*>(&tree_));  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  if (fuse_ == nullptr) {
    throw std::runtime_error("cannot create the FUSE filesystem");
  }
  if (fuse_mount(fuse_, mountpoint_.c_str()) != 0) {
    fuse_destroy(fuse_);
    fuse_ = nullptr;
    throw std::runtime_error("cannot mount FUSE at " + mountpoint_ +
                             " (is /dev/fuse there and are we root?)");
  }
  connection_ = connection_of(mountpoint_);
  loop_ = std::thread([f = fuse_] {
    fuse_loop_config* cfg = fuse_loop_cfg_create();
    // One worker per blocked write: every PF's sriov_numvfs may block at once.
    fuse_loop_cfg_set_max_threads(cfg, 512);
    fuse_loop_cfg_set_idle_threads(cfg, 8);
    fuse_loop_mt(f, cfg);
    fuse_loop_cfg_destroy(cfg);
  });
}

void FuseMount::stop() {
  if (fuse_ == nullptr) {
    return;
  }
  fuse_exit(fuse_);
  // Abort the connection, as the kernel does when a FUSE server dies: requests still
  // waiting for an answer fail with ENOTCONN, so a writer left in one cannot keep the
  // mount (and the workers' reads) alive past the unmount.
  if (connection_ >= 0) {
    abort_connection(connection_);
  }
  // Unmounting ends the workers' reads from /dev/fuse, so the loop returns.
  fuse_unmount(fuse_);
  // libfuse skips the unmount of an aborted connection: detach it here.
  static_cast<void>(umount2(mountpoint_.c_str(), MNT_DETACH));
  if (loop_.joinable()) {
    loop_.join();
  }
  fuse_destroy(fuse_);
  fuse_ = nullptr;
}

int FuseMount::connection_of(const std::string& mountpoint) {
  // The FUSE connection number is the minor of the mount's device ("0:52").
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id;
    std::string parent;
    std::string device;
    std::string root;
    std::string point;
    fields >> id >> parent >> device >> root >> point;
    if (point == mountpoint) {
      const auto colon = device.find(':');
      return colon == std::string::npos ? -1 : std::stoi(device.substr(colon + 1));
    }
  }
  return -1;
}

void FuseMount::abort_connection(int connection) {
  const std::string control = "/sys/fs/fuse/connections";
  struct stat st {};
  if (::stat((control + "/" + std::to_string(connection)).c_str(), &st) != 0) {
    // fusectl is not mounted where systemd would have mounted it.
    static_cast<void>(::mount("fusectl", control.c_str(), "fusectl", 0, nullptr));
  }
  std::ofstream(control + "/" + std::to_string(connection) + "/abort") << "1";
}

bool FuseMount::clear_stale(const std::string& mountpoint) {
  struct stat st {};
  if (::stat(mountpoint.c_str(), &st) == 0 || errno != ENOTCONN) {
    return false;
  }
  return umount2(mountpoint.c_str(), MNT_DETACH) == 0;
}

}  // namespace vfready::fakehost
