// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vfready/host/worker_process.hpp"
#include "vfready/model/config.hpp"
#include "vfready/model/result.hpp"

// The files vfready's configuration is made of, as their text: read by the caller, or by
// a reader process of its own, so that a file system that hangs holds a process that can
// be left behind rather than the daemon's loop.
namespace vfready::host {

// A configuration is at most this big a file: anything larger is not one (a symlink to
// /dev/zero, a log file given by mistake).
inline constexpr std::size_t kMaxConfigFile = std::size_t{1024} * 1024;

struct ConfigTexts {
  std::vector<model::ConfigSource> config;  // the file, then its drop-ins in name order
  std::vector<model::ConfigSource> tables;  // each compatibility table there is, in order
};

// The config file at `path` and its drop-ins (<dir of file>/vfready.d/*.json, in name
// order; not names that begin with '.'). Each must be a regular file of at most
// kMaxConfigFile bytes on a local file system; the error names the file and why not.
// The caller waits on the file system.
Result<std::vector<model::ConfigSource>> read_config_files(const std::string& path);
// Each compatibility table in `paths` that exists, in order, under the same rules.
Result<std::vector<model::ConfigSource>> read_table_files(const std::vector<std::string>& paths);
// Both: the tables only when the config could be read.
Result<ConfigTexts> read_config_texts(const std::string& path,
                                      const std::vector<std::string>& table_paths);

// read_config_texts in a process of its own (a fork of the caller, detached: nothing has
// to reap it). The caller's loop waits for fd() to turn readable and takes() the answer.
// A reader that does not answer can be dropped: it exits once its read returns.
class ConfigReader {
 public:
  // Starts the reader; an error naming `path` when no process could be made.
  static Result<std::shared_ptr<ConfigReader>> start(const std::string& path,
                                                     const std::vector<std::string>& table_paths);
  ~ConfigReader();
  ConfigReader(const ConfigReader&) = delete;
  ConfigReader& operator=(const ConfigReader&) = delete;
  [[nodiscard]] int fd() const { return fd_; }
  // The answer once it has all come (never waits); an error when the reader ended
  // without one.
  std::optional<Result<ConfigTexts>> take();
  // Whether the reader has ended (its end of the socket closed), read from what take()
  // saw: a reader past its bound is watched until then.
  [[nodiscard]] bool ended() const { return records_.ended(); }

 private:
  ConfigReader(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  // Takes one record of the answer but its end; an error when it is not one.
  std::optional<Error> took(const Record& record);
  int fd_;
  std::string path_;
  RecordReader records_;
  ConfigTexts texts_;
  std::optional<Error> error_;
};

}  // namespace vfready::host
