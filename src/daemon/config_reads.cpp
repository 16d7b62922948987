// SPDX-License-Identifier: Apache-2.0
#include "config_reads.hpp"

#include <poll.h>

#include <utility>

namespace vfready::daemon {

// The read under way on the loop: its reader's socket, until its bound.
class ConfigReads::Waiting final : public host::EventSource {
 public:
  Waiting(ConfigReads& owner, Clock::time_point until) : owner_(owner), until_(until) {}
  host::PollSpec prepare() override {
    return {.fd = owner_.reader_->fd(), .events = POLLIN, .deadline = until_};
  }
  void dispatch(short revents) override {
    // At the bound too, what has come is taken first: an answer there is in time.
    if (auto answer = owner_.reader_->take()) {
      owner_.finish(*answer);
    } else if (revents == 0) {
      owner_.leave_behind();
    }
  }

 private:
  ConfigReads& owner_;
  Clock::time_point until_;
};

ConfigReads::ConfigReads(EventLoop& loop, std::string path, std::vector<std::string> table_paths,
                         std::chrono::milliseconds bound)
    : loop_(loop), path_(std::move(path)), table_paths_(std::move(table_paths)), bound_(bound) {}

ConfigReads::~ConfigReads() {
  for (const auto& id : {reader_source_, left_source_}) {
    if (id) {
      loop_.remove(*id);
    }
  }
}

void ConfigReads::read(Done done) {
  (reader_ ? next_ : reading_).push_back(std::move(done));
  if (!reader_) {
    start();
  }
}

void ConfigReads::start() {
  if (left_) {
    finish(Error{path_ + ": an earlier read of the configuration has not returned (its reader, "
                         "vfready-config, waits on the file system)"});
    return;
  }
  auto reader = host::ConfigReader::start(path_, table_paths_);
  if (!reader) {
    finish(reader.error());
    return;
  }
  reader_ = std::move(reader).value();
  reader_source_ = loop_.add(std::make_shared<Waiting>(*this, Clock::now() + bound_));
}

void ConfigReads::finish(const Result<host::ConfigTexts>& texts) {
  if (reader_source_) {
    loop_.remove(*reader_source_);
    reader_source_.reset();
  }
  reader_.reset();
  auto told = std::exchange(reading_, {});
  if (!next_.empty()) {
    reading_ = std::exchange(next_, {});
    start();
  }
  for (auto& done : told) {
    done(texts);
  }
}

void ConfigReads::leave_behind() {
  left_ = std::exchange(reader_, {});
  loop_.remove(*reader_source_);  // first: one source to an fd (sd-event's epoll)
  reader_source_.reset();
  left_source_ = loop_.add_fd(left_->fd(), POLLIN, [this](short) {
    static_cast<void>(left_->take());  // its late answer, or its end
    if (left_->ended()) {
      loop_.remove(*left_source_);
      left_source_.reset();
      left_.reset();
    }
  });
  finish(Error{path_ + ": reading the configuration did not finish within " +
               std::to_string(bound_.count()) + " ms (a file on a file system that hangs?)"});
}

}  // namespace vfready::daemon
