// SPDX-License-Identifier: Apache-2.0
// The reader process of the configuration (host::ConfigReader): a worker
// (host::fork_worker) that reads the files and sends each as a record: 'c' a config
// file, 't' a table (its path, then its text), 'e' the error that stopped the read, 'z'
// the end of the answer.
#include <unistd.h>

#include <exception>
#include <stdexcept>
#include <utility>

#include "vfready/host/config_texts.hpp"
#include "vfready/host/errno_name.hpp"
#include "vfready/model/byte_fields.hpp"

namespace vfready::host {

namespace {

void send_texts(int socket, const std::string& path, const std::vector<std::string>& tables) {
  Result<ConfigTexts> texts = Error{""};
  try {
    texts = read_config_texts(path, tables);
  } catch (const std::exception& e) {
    texts = Error{path + ": cannot be read: " + e.what()};
  }
  if (!texts) {
    if (!send_record(socket, 'e', texts.error().message)) {
      return;  // the daemon is gone, or no longer waits
    }
  } else {
    for (const auto& [kind, sources] : {std::pair{'c', &texts->config}, {'t', &texts->tables}}) {
      for (const auto& s : *sources) {
        model::ByteWriter out;
        out.text(s.path);
        out.text(s.text);
        if (!send_record(socket, kind, out.take())) {
          return;  // the daemon is gone, or no longer waits
        }
      }
    }
  }
  send_record(socket, 'z', {});
}

}  // namespace

Result<std::shared_ptr<ConfigReader>> ConfigReader::start(
    const std::string& path, const std::vector<std::string>& table_paths) {
  int err = 0;
  const int fd = fork_worker(&err, "vfready-config", [&path, &table_paths](int socket) {
    send_texts(socket, path, table_paths);
  });
  if (fd < 0) {
    return Error{path + ": cannot start a reader of the configuration: " + errno_name(err)};
  }
  return std::shared_ptr<ConfigReader>(new ConfigReader(fd, path));
}

ConfigReader::~ConfigReader() { ::close(fd_); }

std::optional<Result<ConfigTexts>> ConfigReader::take() {
  auto records = records_.read(fd_);
  for (auto& record : records) {
    if (record.fd >= 0) {
      ::close(std::exchange(record.fd, -1));  // none is sent: not ours to keep
    }
  }
  for (auto& record : records) {
    if (record.kind == 'z' && !record.bytes.empty()) {
      return Result<ConfigTexts>(
          Error{path_ + ": the reader of the configuration ended its answer with bytes"});
    }
    if (record.kind == 'z') {
      return error_ ? Result<ConfigTexts>(*error_) : Result<ConfigTexts>(std::move(texts_));
    }
    if (auto problem = took(record)) {
      return Result<ConfigTexts>(std::move(*problem));
    }
  }
  if (records_.ended()) {
    return Result<ConfigTexts>(
        Error{path_ + ": the reader of the configuration ended without an answer"});
  }
  return std::nullopt;
}

std::optional<Error> ConfigReader::took(const Record& record) {
  if (record.kind == 'e') {
    error_ = Error{record.bytes};
    return std::nullopt;
  }
  if (record.kind != 'c' && record.kind != 't') {
    return Error{path_ + ": the reader of the configuration answered a record of kind " +
                 std::to_string(static_cast<unsigned char>(record.kind)) + ", not 'c', 't', " +
                 "'e' or 'z'"};
  }
  try {
    model::ByteReader in(record.bytes);
    model::ConfigSource source;
    source.path = in.text();
    source.text = in.text();
    (record.kind == 'c' ? texts_.config : texts_.tables).push_back(std::move(source));
    return std::nullopt;
  } catch (const std::out_of_range&) {
    return Error{path_ + ": the reader of the configuration answered a file cut short"};
  }
}

}  // namespace vfready::host
