// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "event_loop.hpp"
#include "vfready/host/config_texts.hpp"

// A reload's reads of the configuration, on the loop: each in a reader process
// (host::ConfigReader) that the loop waits for, never the loop itself. One read at a
// time, each waited for at most `bound`; a reader past it (a file system that hangs) is
// left behind, and every read asked until it ends is refused at once.
namespace vfready::daemon {

class ConfigReads {
 public:
  using Done = std::function<void(Result<host::ConfigTexts>)>;
  ConfigReads(EventLoop& loop, std::string path, std::vector<std::string> table_paths,
              std::chrono::milliseconds bound = std::chrono::milliseconds{1000});
  ~ConfigReads();
  ConfigReads(const ConfigReads&) = delete;
  ConfigReads& operator=(const ConfigReads&) = delete;
  // Reads the files anew and tells `done` on the loop: a read starts now, or when the
  // one under way ends (which began before the ask, and may miss an edit made since).
  void read(Done done);

 private:
  class Waiting;
  void start();
  void finish(const Result<host::ConfigTexts>& texts);
  // The reader under way missed its bound: left behind, watched until it ends.
  void leave_behind();

  EventLoop& loop_;
  std::string path_;
  std::vector<std::string> table_paths_;
  std::chrono::milliseconds bound_;
  std::shared_ptr<host::ConfigReader> reader_;  // the read under way, if any
  std::optional<EventLoop::Id> reader_source_;
  std::vector<Done> reading_;                 // told by the read under way
  std::vector<Done> next_;                    // asked since it began: told by the next
  std::shared_ptr<host::ConfigReader> left_;  // a reader past its bound, until it ends
  std::optional<EventLoop::Id> left_source_;
};

}  // namespace vfready::daemon
