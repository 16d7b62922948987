// SPDX-License-Identifier: Apache-2.0
// The reader process of the configuration (host::ConfigReader) and its answer's bytes.
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <exception>

#include "device_call_helper.hpp"
#include "vfready/host/config_texts.hpp"
#include "vfready/host/errno_name.hpp"

namespace vfready::host {

namespace {

constexpr int kSocket = 3;  // where helper::keep_only puts it
// The answer goes in messages of this size at most; the daemon reads them into twice that.
constexpr std::size_t kChunk = std::size_t{32} * 1024;

// An answer is records of a kind, then for 'c' (a config file) and 't' (a table) a path
// and a text, for 'e' (the error) a message; 'z' ends it. Lengths are 32-bit, host order.
void put(std::string& out, std::string_view s) {
  const auto n = static_cast<uint32_t>(s.size());
  out.append(reinterpret_cast<const char*>(&n), sizeof n);  // NOLINT: bytes of a length
  out.append(s);
}

// The next length-prefixed string of `in` at `at`; nullopt when not all of it is there.
std::optional<std::string_view> get(std::string_view in, std::size_t& at) {
  uint32_t n = 0;
  if (in.size() - at < sizeof n) {
    return std::nullopt;
  }
  std::memcpy(&n, in.data() + at, sizeof n);
  if (in.size() - at - sizeof n < n) {
    return std::nullopt;
  }
  at += sizeof n + n;
  return in.substr(at - n, n);
}

// The reader: one request (the config's path, then the tables', NUL-separated), one
// answer, then it exits. It holds no descriptor of the daemon's but its socket.
[[noreturn]] void become_config_reader(int socket) {
  helper::keep_only(socket, "vfready-config");
  std::string request(4096, '\0');
  const ssize_t n = ::recv(kSocket, request.data(), request.size(), 0);
  if (n <= 0) {
    ::_exit(0);  // the daemon closed its end: nothing is asked
  }
  request.resize(static_cast<std::size_t>(n));
  std::vector<std::string> paths;
  for (std::size_t at = 0; at < request.size();) {
    const auto end = request.find('\0', at);
    paths.push_back(request.substr(at, end - at));
    at = end == std::string::npos ? request.size() : end + 1;
  }
  std::string answer;
  try {
    const std::vector<std::string> tables(paths.begin() + 1, paths.end());
    answer = encode_texts(read_config_texts(paths.front(), tables));
  } catch (const std::exception& e) {
    answer = encode_texts(Error{paths.front() + ": cannot be read: " + e.what()});
  }
  for (std::size_t at = 0; at < answer.size(); at += kChunk) {
    const auto size = std::min(kChunk, answer.size() - at);
    ssize_t sent = 0;
    do {
      sent = ::send(kSocket, answer.data() + at, size, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    if (sent < 0) {
      ::_exit(0);  // the daemon is gone, or no longer waits
    }
  }
  ::_exit(0);
}

}  // namespace

std::string encode_texts(const Result<ConfigTexts>& texts) {
  std::string out;
  if (!texts) {
    out += 'e';
    put(out, texts.error().message);
  } else {
    for (const auto& [kind, sources] : {std::pair{'c', &texts->config}, {'t', &texts->tables}}) {
      for (const auto& s : *sources) {
        out += kind;
        put(out, s.path);
        put(out, s.text);
      }
    }
  }
  out += 'z';
  return out;
}

std::optional<Result<ConfigTexts>> decode_texts(std::string_view bytes) {
  ConfigTexts texts;
  std::optional<Error> error;
  for (std::size_t at = 0; at < bytes.size();) {
    const char kind = bytes[at++];
    if (kind == 'z') {
      return error ? Result<ConfigTexts>(*error) : Result<ConfigTexts>(std::move(texts));
    }
    if (kind != 'c' && kind != 't' && kind != 'e') {
      return Result<ConfigTexts>(
          Error{"the reader of the configuration answered what is not "
                "an answer (a record of kind " +
                std::to_string(static_cast<unsigned char>(kind)) + ")"});
    }
    const auto first = get(bytes, at);
    if (!first) {
      return std::nullopt;
    }
    if (kind == 'e') {
      error = Error{std::string(*first)};
      continue;
    }
    const auto second = get(bytes, at);
    if (!second) {
      return std::nullopt;
    }
    (kind == 'c' ? texts.config : texts.tables)
        .push_back({std::string(*first), std::string(*second)});
  }
  return std::nullopt;
}

Result<std::shared_ptr<ConfigReader>> ConfigReader::start(
    const std::string& path, const std::vector<std::string>& table_paths) {
  std::string request = path;
  for (const auto& t : table_paths) {
    request += '\0';
    request += t;
  }
  if (request.size() > 4096) {
    return Error{path + ": the paths of the configuration are longer than 4096 bytes in all"};
  }
  int err = 0;
  int pid = 0;
  const int fd = helper::fork_detached(&err, become_config_reader, &pid);
  if (fd < 0) {
    return Error{path + ": cannot start a reader of the configuration: " + errno_name(err)};
  }
  // The reader has not read it yet; the socket holds it until it does.
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL | MSG_DONTWAIT) !=
      static_cast<ssize_t>(request.size())) {
    const int saved = errno;
    ::close(fd);
    return Error{path + ": cannot ask the reader of the configuration: " + errno_name(saved)};
  }
  return std::shared_ptr<ConfigReader>(new ConfigReader(fd, path));
}

ConfigReader::~ConfigReader() { ::close(fd_); }

std::optional<Result<ConfigTexts>> ConfigReader::take() {
  std::string chunk(2 * kChunk, '\0');
  while (!ended_) {
    const ssize_t n = ::recv(fd_, chunk.data(), chunk.size(), MSG_DONTWAIT);
    if (n > 0) {
      got_.append(chunk.data(), static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      break;
    } else {
      ended_ = true;  // its end closed (0), or the socket failed
    }
  }
  // An answer ends with 'z': decoded only then (a large one comes in many messages).
  if (!got_.empty() && got_.back() == 'z') {
    if (auto answer = decode_texts(got_)) {
      return answer;
    }
  }
  if (ended_) {
    return Result<ConfigTexts>(
        Error{path_ + ": the reader of the configuration ended without an answer"});
  }
  return std::nullopt;
}

}  // namespace vfready::host
