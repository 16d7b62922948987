// SPDX-License-Identifier: Apache-2.0
#define FUSE_USE_VERSION 312
#include "fuse_mount.hpp"

#include <fuse3/fuse_lowlevel.h>
#include <linux/fuse.h>
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

// sysfs reports every attribute as 4096 bytes long, whatever it holds. A write within
// that size is not "past EOF", which lets FUSE run writes to one file in parallel.
constexpr off_t kAttributeSize = 4096;

// Everything changes behind the kernel's back (renames, new VFs). Names that exist may
// be cached, which makes path walks cheap: every stat, open and readdir still comes here
// (attributes and misses are never cached), so a removed or renamed entry answers
// ENOENT at once and a new one is found at once. Symlink targets are cached too, as
// kernfs resolves its links without asking anyone: the tree says when one goes away or
// changes (forget_links), and the kernel forgets it right after the change, before the
// write that made it (a bind, say) returns.
constexpr double kEntryTimeout = 3600;

FuseMount& mount_of(fuse_req_t req) { return *static_cast<FuseMount*>(fuse_req_userdata(req)); }

void fill_stat(fuse_ino_t ino, const Tree::Entry& e, struct stat* st) {
  std::memset(st, 0, sizeof *st);
  st->st_ino = ino;
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

std::string child_path(const std::string& parent, const char* name) {
  return parent.empty() ? std::string(name) : parent + "/" + name;
}

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  mount_of(req).count(FuseMount::Request::kLookup);
  auto& m = mount_of(req);
  auto dir = m.path_of(parent);
  if (!dir) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  const std::string path = child_path(*dir, name);
  auto e = m.tree().stat(path);
  if (!e) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  fuse_entry_param out{};
  out.ino = m.ino_of(path);
  out.generation = 1;
  out.entry_timeout = kEntryTimeout;
  out.attr_timeout = 0;
  fill_stat(out.ino, *e, &out.attr);
  fuse_reply_entry(req, &out);
}

// Inode numbers are kept for the life of the mount: nothing to forget.
void op_forget(fuse_req_t req, fuse_ino_t /*ino*/, uint64_t /*nlookup*/) {
  mount_of(req).count(FuseMount::Request::kForget);
  fuse_reply_none(req);
}

void op_forget_multi(fuse_req_t req, size_t /*count*/, fuse_forget_data* /*forgets*/) {
  mount_of(req).count(FuseMount::Request::kForget);
  fuse_reply_none(req);
}

// The requests libfuse would answer by itself, answered as it would, to count them:
// directories open with no state, closes release nothing, and FLUSH and ACCESS are
// ENOSYS, after which the kernel stops sending them.
void op_opendir(fuse_req_t req, fuse_ino_t /*ino*/, fuse_file_info* fi) {
  mount_of(req).count(FuseMount::Request::kOpendir);
  fuse_reply_open(req, fi);
}

void op_releasedir(fuse_req_t req, fuse_ino_t /*ino*/, fuse_file_info* /*fi*/) {
  mount_of(req).count(FuseMount::Request::kReleasedir);
  fuse_reply_err(req, 0);
}

void op_release(fuse_req_t req, fuse_ino_t /*ino*/, fuse_file_info* /*fi*/) {
  mount_of(req).count(FuseMount::Request::kRelease);
  fuse_reply_err(req, 0);
}

void op_flush(fuse_req_t req, fuse_ino_t /*ino*/, fuse_file_info* /*fi*/) {
  mount_of(req).count(FuseMount::Request::kFlush);
  fuse_reply_err(req, ENOSYS);
}

void op_access(fuse_req_t req, fuse_ino_t /*ino*/, int /*mask*/) {
  mount_of(req).count(FuseMount::Request::kAccess);
  fuse_reply_err(req, ENOSYS);
}

// The entry at `ino`'s path, or an error already sent.
std::unique_ptr<Tree::Entry> entry_or_reply(fuse_req_t req, fuse_ino_t ino) {
  auto& m = mount_of(req);
  auto path = m.path_of(ino);
  auto e = path ? m.tree().stat(*path) : nullptr;
  if (!e) {
    fuse_reply_err(req, ENOENT);
  }
  return e;
}

void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info* /*fi*/) {
  mount_of(req).count(FuseMount::Request::kGetattr);
  if (auto e = entry_or_reply(req, ino)) {
    struct stat st {};
    fill_stat(ino, *e, &st);
    fuse_reply_attr(req, &st, 0);
  }
}

// `echo x > attr` opens with O_TRUNC, which FUSE sends as a size change; sysfs ignores
// the truncation, and so does this.
void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat* /*attr*/, int /*to_set*/,
                fuse_file_info* /*fi*/) {
  mount_of(req).count(FuseMount::Request::kSetattr);
  if (auto e = entry_or_reply(req, ino)) {
    struct stat st {};
    fill_stat(ino, *e, &st);
    fuse_reply_attr(req, &st, 0);
  }
}

void op_readlink(fuse_req_t req, fuse_ino_t ino) {
  mount_of(req).count(FuseMount::Request::kReadlink);
  if (auto e = entry_or_reply(req, ino)) {
    if (e->kind != Tree::Kind::kLink) {
      fuse_reply_err(req, EINVAL);
      return;
    }
    fuse_reply_readlink(req, e->link_target.c_str());
  }
}

void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info* /*fi*/) {
  mount_of(req).count(FuseMount::Request::kReaddir);
  auto& m = mount_of(req);
  auto path = m.path_of(ino);
  auto e = path ? m.tree().stat(*path) : nullptr;
  if (!e) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  if (e->kind != Tree::Kind::kDir) {
    fuse_reply_err(req, ENOTDIR);
    return;
  }
  // The offset of an entry is its index in the sorted listing, plus one.
  std::vector<std::string> names = {".", ".."};
  for (auto& name : m.tree().list(*path)) {
    names.push_back(std::move(name));
  }
  std::vector<char> buf(size);
  std::size_t used = 0;
  for (auto i = static_cast<std::size_t>(std::max<off_t>(offset, 0)); i < names.size(); ++i) {
    struct stat st {};
    st.st_ino = i < 2 ? ino : m.ino_of(child_path(*path, names[i].c_str()));
    const auto need = fuse_add_direntry(req, buf.data() + used, size - used, names[i].c_str(), &st,
                                        static_cast<off_t>(i + 1));
    if (need > size - used) {
      break;
    }
    used += need;
  }
  fuse_reply_buf(req, buf.data(), used);
}

void op_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  mount_of(req).count(FuseMount::Request::kOpen);
  auto e = entry_or_reply(req, ino);
  if (!e) {
    return;
  }
  if (e->kind == Tree::Kind::kDir) {
    fuse_reply_err(req, EISDIR);
    return;
  }
  const int acc = fi->flags & O_ACCMODE;
  const bool reads = acc != O_WRONLY;
  const bool writes = acc != O_RDONLY;
  // As kernfs: opening for an access the attribute has no handler for is EACCES, and
  // so is one its mode denies to anyone but root (sysfs files belong to root).
  const bool root = fuse_req_ctx(req)->uid == 0;
  if ((reads && (!e->attr->read || (!root && (e->mode & S_IROTH) == 0))) ||
      (writes && (!e->attr->write || (!root && (e->mode & S_IWOTH) == 0)))) {
    fuse_reply_err(req, EACCES);
    return;
  }
  // kernfs serialises writes per open file, not per attribute: two processes binding
  // two devices through one driver's `bind` run at once. FUSE holds the inode lock for
  // a write unless the open asks for parallel direct writes, which libfuse 3.14's
  // fuse_reply_open cannot say; the reply is the kernel's struct, sent as it is.
  fuse_open_out out{};
  out.open_flags = FOPEN_DIRECT_IO | FOPEN_PARALLEL_DIRECT_WRITES;
  fuse_reply_buf(req, reinterpret_cast<const char*>(&out),  // NOLINT(*-reinterpret-cast)
                 sizeof out);
}

void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info* /*fi*/) {
  mount_of(req).count(FuseMount::Request::kRead);
  auto e = entry_or_reply(req, ino);
  if (!e) {
    return;
  }
  if (e->kind != Tree::Kind::kFile) {
    fuse_reply_err(req, EISDIR);
    return;
  }
  if (e->attr->read_error) {
    if (const int err = e->attr->read_error(); err != 0) {
      fuse_reply_err(req, err);
      return;
    }
  }
  const std::string value = e->attr->read();
  if (offset < 0 || static_cast<size_t>(offset) >= value.size()) {
    fuse_reply_buf(req, nullptr, 0);
    return;
  }
  const auto n = std::min(size, value.size() - static_cast<size_t>(offset));
  fuse_reply_buf(req, value.data() + offset, n);
}

void op_write(fuse_req_t req, fuse_ino_t ino, const char* buf, size_t size, off_t /*offset*/,
              fuse_file_info* /*fi*/) {
  mount_of(req).count(FuseMount::Request::kWrite);
  auto e = entry_or_reply(req, ino);
  if (!e) {
    return;
  }
  if (e->kind != Tree::Kind::kFile || !e->attr->write) {
    fuse_reply_err(req, EACCES);
    return;
  }
  const int err = e->attr->write(std::string_view(buf, size));
  if (err == 0) {
    fuse_reply_write(req, size);
  } else {
    fuse_reply_err(req, err);
  }
}

void op_init(void* /*userdata*/, fuse_conn_info* conn) {
  if ((conn->capable & FUSE_CAP_CACHE_SYMLINKS) != 0) {
    conn->want |= FUSE_CAP_CACHE_SYMLINKS;
  }
}

const fuse_lowlevel_ops kOperations = [] {
  fuse_lowlevel_ops ops{};
  ops.init = op_init;
  ops.lookup = op_lookup;
  ops.forget = op_forget;
  ops.forget_multi = op_forget_multi;
  ops.getattr = op_getattr;
  ops.setattr = op_setattr;
  ops.readlink = op_readlink;
  ops.readdir = op_readdir;
  ops.open = op_open;
  ops.read = op_read;
  ops.write = op_write;
  ops.opendir = op_opendir;
  ops.releasedir = op_releasedir;
  ops.release = op_release;
  ops.flush = op_flush;
  ops.access = op_access;
  return ops;
}();

}  // namespace

FuseMount::FuseMount(const Tree& tree, std::string mountpoint)
    : tree_(tree), mountpoint_(std::move(mountpoint)) {
  paths_.emplace_back();  // FUSE_ROOT_ID (1): the root, ""
  inos_.emplace("", FUSE_ROOT_ID);
}

FuseMount::~FuseMount() { stop(); }

uint64_t FuseMount::ino_of(const std::string& path) {
  std::lock_guard lock(inodes_mu_);
  auto [it, added] = inos_.try_emplace(path, paths_.size() + FUSE_ROOT_ID);
  if (added) {
    paths_.push_back(path);
  }
  return it->second;
}

std::optional<std::string> FuseMount::path_of(uint64_t ino) const {
  std::lock_guard lock(inodes_mu_);
  if (ino < FUSE_ROOT_ID || ino - FUSE_ROOT_ID >= paths_.size()) {
    return std::nullopt;
  }
  return paths_[ino - FUSE_ROOT_ID];
}

void FuseMount::forget_links(const std::vector<std::string>& paths) {
  // Held while the session is used: stop() waits for a call under way, and none starts
  // after it. (A notification can wait on a READLINK in flight, which the workers,
  // still serving until stop() takes this lock, answer.)
  std::lock_guard serving(notify_mu_);
  if (session_ == nullptr || stopping_) {
    return;
  }
  for (const auto& path : paths) {
    uint64_t ino = 0;
    {
      std::lock_guard lock(inodes_mu_);
      const auto it = inos_.find(path);
      if (it == inos_.end()) {
        continue;  // never looked up: nothing cached
      }
      ino = it->second;
    }
    // ENOENT: the kernel holds no inode for it. The whole range: the target's page.
    static_cast<void>(fuse_lowlevel_notify_inval_inode(session_, ino, 0, 0));
  }
}

std::string FuseMount::request_counts() const {
  std::string out;
  for (std::size_t i = 0; i < requests_.size(); ++i) {
    out += std::string(kRequestNames.at(i)) + " " +
           std::to_string(requests_.at(i).load(std::memory_order_relaxed)) + "\n";
  }
  return out;
}

void FuseMount::start() {
  // No default_permissions: with it the kernel asks for the attributes of every path
  // component of every open (attributes are never cached here), some ten round trips
  // per sysfs access that kernfs does not make. Access is checked in op_open instead;
  // every directory is 0755, as in sysfs.
  std::vector<std::string> argv_storage = {"vfready-fakehost", "-o", "allow_other", "-o",
                                           "fsname=vfready-fakehost,subtype=sysfs"};
  std::vector<char*> argv;
  argv.reserve(argv_storage.size());
  for (auto& a : argv_storage) {
    argv.push_back(a.data());
  }
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());
  session_ = fuse_session_new(&args, &kOperations, sizeof kOperations, this);
  fuse_opt_free_args(&args);  // the session may have copied the arguments into it
  if (session_ == nullptr) {
    throw std::runtime_error("cannot create the FUSE session");
  }
  if (fuse_session_mount(session_, mountpoint_.c_str()) != 0) {
    fuse_session_destroy(session_);
    session_ = nullptr;
    throw std::runtime_error("cannot mount FUSE at " + mountpoint_ +
                             " (is /dev/fuse there and are we root?)");
  }
  connection_ = connection_of(mountpoint_);
  loop_ = std::thread([s = session_] {
    fuse_loop_config* cfg = fuse_loop_cfg_create();
    // One worker per blocked write: every PF's sriov_numvfs may block at once.
    fuse_loop_cfg_set_max_threads(cfg, 512);
    fuse_loop_cfg_set_idle_threads(cfg, 8);
    fuse_session_loop_mt(s, cfg);
    fuse_loop_cfg_destroy(cfg);
  });
}

void FuseMount::stop() {
  {
    std::lock_guard serving(notify_mu_);
    if (session_ == nullptr || stopping_) {
      return;
    }
    stopping_ = true;
  }
  fuse_session_exit(session_);
  // Abort the connection, as the kernel does when a FUSE server dies: requests still
  // waiting for an answer fail with ENOTCONN, so a writer left in one cannot keep the
  // mount (and the workers' reads) alive past the unmount.
  if (connection_ >= 0) {
    abort_connection(connection_);
  }
  // Unmounting ends the workers' reads from /dev/fuse, so the loop returns.
  fuse_session_unmount(session_);
  // libfuse skips the unmount of an aborted connection: detach it here.
  static_cast<void>(umount2(mountpoint_.c_str(), MNT_DETACH));
  if (loop_.joinable()) {
    loop_.join();
  }
  fuse_session_destroy(session_);
  session_ = nullptr;
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
