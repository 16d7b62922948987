// SPDX-License-Identifier: Apache-2.0
#include "device_call_helper.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <iterator>

namespace vfready::host::helper {

namespace {

// The wire format, in this machine's byte order (both ends are the same program):
//   request: u32 count, then per call: OpHeader, path with its NUL, value
//   answer:  u32 count, then per call run: ResultHeader, what a read gave
struct OpHeader {
  uint8_t kind = 0;
  uint8_t flags = 0;  // kKeepOpen
  uint8_t pad[2] = {};
  uint32_t path_len = 0;  // with the NUL
  uint32_t value_len = 0;
};
struct ResultHeader {
  int32_t err = 0;
  uint32_t len = 0;
};
constexpr uint8_t kKeepOpen = 1;

constexpr std::size_t kPage = 4096;
constexpr std::size_t kMaxRequest = std::size_t{128} * 1024;
constexpr std::size_t kMaxAnswer = 4 + kBatch * (sizeof(ResultHeader) + kPage);
constexpr int kSocket = 3;  // the helper's end, after spawn()

// --- The helper. It was forked from a process with other threads, so it makes only
// async-signal-safe calls (system calls): no allocation, no locks, no C++ library.

char g_request[kMaxRequest];
char g_answer[kMaxAnswer];

// A sysfs attribute comes whole in one read; a short read is its end.
int32_t read_file(const char* path, char* out, uint32_t* len) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return errno;
  }
  *len = 0;
  while (*len < kPage) {
    const ssize_t n = ::read(fd, out + *len, kPage - *len);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return err;
    }
    *len += static_cast<uint32_t>(n);
    if (n == 0 || *len < kPage) {
      break;
    }
  }
  ::close(fd);
  return 0;
}

// One write(2) of the whole value, as sysfs stores take it.
int32_t write_file(const char* path, const char* value, uint32_t len) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    return errno;
  }
  ssize_t n = 0;
  do {
    n = ::write(fd, value, len);
  } while (n < 0 && errno == EINTR);
  const int err = n < 0 ? errno : 0;
  ::close(fd);
  return err;
}

// Files written again and again (drivers_probe) stay open in the helper: each write is
// then one write(2) at offset 0, as sysfs takes any number of stores on one open file.
struct KeptOpen {
  char path[128];
  int fd;
};
KeptOpen g_kept[8];
std::size_t g_kept_count = 0;

int32_t write_kept_open(const char* path, const char* value, uint32_t len) {
  int fd = -1;
  for (std::size_t i = 0; i < g_kept_count && fd < 0; ++i) {
    if (std::strcmp(g_kept[i].path, path) == 0) {
      fd = g_kept[i].fd;
    }
  }
  if (fd < 0) {
    const std::size_t path_len = std::strlen(path);
    if (g_kept_count == std::size(g_kept) || path_len >= sizeof g_kept[0].path) {
      return write_file(path, value, len);  // no room: opened for this write only
    }
    fd = ::open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      return errno;
    }
    std::memcpy(g_kept[g_kept_count].path, path, path_len + 1);
    g_kept[g_kept_count++].fd = fd;
  }
  ssize_t n = 0;
  do {
    n = ::pwrite(fd, value, len, 0);
  } while (n < 0 && errno == EINTR);
  return n < 0 ? errno : 0;
}

// The room of call `ran`'s netlink answer, its result header at `out`: a page, and all
// the answer's room that the calls after it (a page each) do not need: a PF's VFs, as
// its driver reports them, take about 100 bytes each (keep_link).
uint32_t netlink_room(std::size_t out, uint32_t count, uint32_t ran) {
  const std::size_t after = std::min<std::size_t>(count, kBatch) - ran - 1;
  return static_cast<uint32_t>(kMaxAnswer - out - sizeof(ResultHeader) -
                               after * (sizeof(ResultHeader) + kPage));
}

// Runs the calls of one request; answers the length of the answer, 0 when the request
// is malformed.
std::size_t serve_one(std::size_t size) {
  uint32_t count = 0;
  if (size < sizeof count) {
    return 0;
  }
  std::memcpy(&count, g_request, sizeof count);
  std::size_t in = sizeof count;
  std::size_t out = sizeof(uint32_t);
  uint32_t ran = 0;
  for (; ran < count && ran < kBatch; ++ran) {
    OpHeader op;
    if (size - in < sizeof op) {
      return 0;
    }
    std::memcpy(&op, g_request + in, sizeof op);
    in += sizeof op;
    if (op.path_len == 0 || op.path_len > size - in || op.value_len > size - in - op.path_len ||
        g_request[in + op.path_len - 1] != '\0') {
      return 0;
    }
    const char* path = g_request + in;
    const char* value = path + op.path_len;
    in += op.path_len + op.value_len;
    ResultHeader result;
    char* data = g_answer + out + sizeof result;
    const auto kind = static_cast<DeviceOp::Kind>(op.kind);
    result.err =
        kind == DeviceOp::Kind::kRead ? read_file(path, data, &result.len)
        : kind == DeviceOp::Kind::kNetlink
            ? netlink_request(value, op.value_len, data, netlink_room(out, count, ran), &result.len)
        : (op.flags & kKeepOpen) != 0 ? write_kept_open(path, value, op.value_len)
                                      : write_file(path, value, op.value_len);
    if (result.err != 0) {
      result.len = 0;
    }
    // A read's text without its trailing newline (and NULs): a netlink answer is bytes.
    while (kind == DeviceOp::Kind::kRead && result.len > 0 &&
           (data[result.len - 1] == '\n' || data[result.len - 1] == '\0')) {
      --result.len;
    }
    std::memcpy(g_answer + out, &result, sizeof result);
    out += sizeof result + result.len;
    if (result.err != 0 && op.kind == static_cast<uint8_t>(DeviceOp::Kind::kWrite)) {
      ++ran;
      break;  // the calls after a failed write are not made
    }
  }
  std::memcpy(g_answer, &ran, sizeof ran);
  return out;
}

[[noreturn]] void serve() {
  while (true) {
    ssize_t n = 0;
    do {
      n = ::recv(kSocket, g_request, sizeof g_request, 0);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) {
      ::_exit(0);  // the daemon closed its end (exited, or has no more use for us)
    }
    const std::size_t len = serve_one(static_cast<std::size_t>(n));
    if (len == 0) {
      ::_exit(2);
    }
    ssize_t sent = 0;
    do {
      sent = ::send(kSocket, g_answer, len, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    if (sent < 0) {
      ::_exit(0);  // nobody waits for this answer any more
    }
  }
}

}  // namespace

void keep_only(int socket, const char* name) {
  if (socket != kSocket && ::dup2(socket, kSocket) < 0) {
    ::_exit(3);
  }
  ::close_range(kSocket + 1, ~0U, 0);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);  // NOLINT(concurrency-mt-unsafe): one thread here
  ::prctl(PR_SET_NAME, name, 0, 0, 0);
}

void become_helper(int socket) {
  keep_only(socket, "vfready-call");
  serve();
}

int fork_detached(int* err, const std::function<void(int)>& become, int* pid) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    *err = errno;
    return -1;
  }
  const pid_t child = ::fork();
  if (child < 0) {
    *err = errno;
    ::close(sv[0]);
    ::close(sv[1]);
    return -1;
  }
  if (child == 0) {
    // Forks the process and exits: it is then nobody's child of ours to reap. It says
    // first who the grandchild is, in the first message of our end (before any answer:
    // the grandchild answers only what it is asked, and nothing is asked yet).
    const pid_t grandchild = ::fork();
    if (grandchild != 0) {
      const int32_t told = grandchild;
      static_cast<void>(::send(sv[1], &told, sizeof told, MSG_NOSIGNAL | MSG_DONTWAIT));
      ::_exit(grandchild < 0 ? 1 : 0);
    }
    try {
      become(sv[1]);
    } catch (...) {
      // Nothing of the caller's runs in this process: an exception ends it here.
    }
    ::_exit(4);
  }
  ::close(sv[1]);
  int status = 0;
  // The middle process only forks and exits: this wait is short.
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    *err = EAGAIN;
    ::close(sv[0]);
    return -1;
  }
  int32_t told = 0;
  *pid = ::recv(sv[0], &told, sizeof told, MSG_DONTWAIT) == sizeof told ? told : 0;
  return sv[0];
}

int spawn(int* err, int* pid) { return fork_detached(err, become_helper, pid); }

std::string encode(std::span<const DeviceOp> ops, std::optional<std::string_view> root) {
  std::string out;
  std::size_t size = sizeof(uint32_t);
  // A netlink op's "path" is what it does, not a file.
  const auto rooted = [&](const DeviceOp& op) {
    return root && op.kind != DeviceOp::Kind::kNetlink;
  };
  for (const auto& op : ops) {
    size += sizeof(OpHeader) + (rooted(op) ? root->size() + 1 : 0) + op.path.size() + 1 +
            op.value.size();
  }
  out.reserve(size);  // made once: an OFED batch is some 100 files
  const auto put = [&](const void* p, std::size_t n) {
    out.append(static_cast<const char*>(p), n);
  };
  const auto count = static_cast<uint32_t>(ops.size());
  put(&count, sizeof count);
  for (const auto& op : ops) {
    OpHeader h;
    h.kind = static_cast<uint8_t>(op.kind);
    h.flags = op.keep_open ? kKeepOpen : 0;
    const std::size_t prefix = rooted(op) ? root->size() + 1 : 0;
    h.path_len = static_cast<uint32_t>(prefix + op.path.size() + 1);
    h.value_len = static_cast<uint32_t>(op.value.size());
    put(&h, sizeof h);
    if (prefix != 0) {
      put(root->data(), root->size());
      put("/", 1);
    }
    put(op.path.c_str(), op.path.size() + 1);
    put(op.value.data(), op.value.size());
  }
  return out;
}

std::vector<DeviceOp> decode_request(const std::string& request) {
  std::vector<DeviceOp> out;
  uint32_t count = 0;
  if (request.size() < sizeof count) {
    return out;
  }
  std::memcpy(&count, request.data(), sizeof count);
  std::size_t at = sizeof count;
  for (uint32_t i = 0; i < count && request.size() - at >= sizeof(OpHeader); ++i) {
    OpHeader h;
    std::memcpy(&h, request.data() + at, sizeof h);
    at += sizeof h;
    if (h.path_len == 0 || h.path_len > request.size() - at ||
        h.value_len > request.size() - at - h.path_len) {
      return {};
    }
    DeviceOp op;
    op.kind = static_cast<DeviceOp::Kind>(h.kind);
    op.keep_open = (h.flags & kKeepOpen) != 0;
    op.path.assign(request, at, h.path_len - 1);
    op.value.assign(request, at + h.path_len, h.value_len);
    at += h.path_len + h.value_len;
    out.push_back(std::move(op));
  }
  return out;
}

bool decode(const char* data, std::size_t size, std::vector<DeviceOpResult>* out) {
  uint32_t count = 0;
  if (size < sizeof count) {
    return false;
  }
  std::memcpy(&count, data, sizeof count);
  std::size_t at = sizeof count;
  out->reserve(out->size() + std::min<std::size_t>(count, kBatch));  // a batch's, at most
  for (uint32_t i = 0; i < count; ++i) {
    ResultHeader h;
    if (size - at < sizeof h) {
      return false;
    }
    std::memcpy(&h, data + at, sizeof h);
    at += sizeof h;
    if (h.len > size - at) {
      return false;
    }
    out->push_back({h.err, std::string(data + at, h.len)});
    at += h.len;
  }
  return at == size;
}

std::size_t max_answer() {
  return kMaxAnswer;  // a netlink answer may take the room of the calls it leaves out
}

}  // namespace vfready::host::helper
