// SPDX-License-Identifier: Apache-2.0
#include "log.hpp"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <ctime>
#include <mutex>
#include <vector>

#include "vfready/model/printable.hpp"

namespace vfready::daemon::log {

namespace {

thread_local const Fields* tls_fields = nullptr;

// syslog(3) priorities, as the journal wants them in PRIORITY=.
int priority(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::critical:
      return 2;
    case spdlog::level::err:
      return 3;
    case spdlog::level::warn:
      return 4;
    case spdlog::level::info:
      return 6;
    default:
      return 7;
  }
}

// "[0000:18:00.4] ": the VF, or else the PF, the line is about; "" for neither.
std::string about(const Fields* f) {
  if (f == nullptr) {
    return "";
  }
  const auto& who = !f->vf.empty() ? f->vf : f->pf;
  return who.empty() ? "" : "[" + who + "] ";
}

// Plain lines on stderr for a person: "2026-12-03T00:50:01.123Z info [0000:18:00.0 ibs0]
// ready in 412 ms": when, how bad, the PF or VF with its netdev's name, what.
class ConsoleSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const auto since = msg.time.time_since_epoch();
    const auto secs = std::chrono::duration_cast<std::chrono::seconds>(since);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(since - secs).count();
    const std::time_t t = secs.count();
    std::tm utc{};
    gmtime_r(&t, &utc);
    char when[40];
    const auto n = std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &utc);
    static_cast<void>(std::snprintf(when + n, sizeof when - n, ".%03dZ", static_cast<int>(ms)));
    std::string who;
    if (const auto* f = tls_fields; f != nullptr) {
      who = about(f);
      if (!who.empty() && !f->interface.empty()) {
        who.insert(who.size() - 2, " " + f->interface);
      }
    }
    const auto level = spdlog::level::to_string_view(msg.level);
    const std::string line = std::string(when) + " " + std::string(level.data(), level.size()) +
                             " " + who + std::string(msg.payload.data(), msg.payload.size()) + "\n";
    static_cast<void>(std::fwrite(line.data(), 1, line.size(), stderr));
  }
  void flush_() override { static_cast<void>(std::fflush(stderr)); }
};

class JournalSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  JournalSink(std::shared_ptr<host::Journal> journal, std::string identifier)
      : journal_(std::move(journal)), identifier_(std::move(identifier)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::vector<std::string> fields;
    fields.push_back("MESSAGE=" + about(tls_fields) +
                     std::string(msg.payload.data(), msg.payload.size()));
    fields.push_back("PRIORITY=" + std::to_string(priority(msg.level)));
    fields.push_back("SYSLOG_IDENTIFIER=" + identifier_);
    if (const auto* f = tls_fields; f != nullptr) {
      const auto add = [&](const char* key, const std::string& value) {
        if (!value.empty()) {
          fields.push_back(std::string(key) + "=" + value);
        }
      };
      add("VFREADY_STEP", f->step);
      add("VFREADY_PF", f->pf);
      add("VFREADY_VF", f->vf);
      add("INTERFACE", f->interface);
      if (f->event) {
        const auto& e = model::event_info(*f->event);
        fields.push_back("MESSAGE_ID=" + std::string(e.message_id));
        fields.push_back("VFREADY_EVENT=" + std::string(e.name));
      }
    }
    journal_->send(fields);
  }
  void flush_() override {}

 private:
  std::shared_ptr<host::Journal> journal_;
  std::string identifier_;
};

}  // namespace

void write(spdlog::level::level_enum level, const Fields& raw, const std::string& message) {
  // Names and messages may carry any bytes the host gave a netdev: escaped, so that no
  // control character reaches a terminal or the journal.
  Fields fields = raw;
  fields.interface = model::printable(raw.interface);
  fields.step = model::printable(raw.step);
  tls_fields = &fields;  // each sink says which PF or VF the line is about
  spdlog::log(level, "{}", model::printable(message));
  tls_fields = nullptr;
}

const Fields* current_fields() { return tls_fields; }

std::shared_ptr<spdlog::sinks::sink> make_journal_sink(std::shared_ptr<host::Journal> journal,
                                                       std::string identifier) {
  return std::make_shared<JournalSink>(std::move(journal), std::move(identifier));
}

void setup(Target target, std::shared_ptr<host::Journal> journal, const std::string& identifier) {
  bool to_journal =
      target == Target::kJournal || (target == Target::kAuto && host::stderr_is_journal());
  const bool missing = to_journal && !host::journal_reachable();
  to_journal = to_journal && !missing;
  std::shared_ptr<spdlog::logger> logger;
  if (to_journal) {
    logger = std::make_shared<spdlog::logger>(identifier,
                                              make_journal_sink(std::move(journal), identifier));
  } else {
    logger = std::make_shared<spdlog::logger>(identifier, std::make_shared<ConsoleSink>());
  }
  logger->set_pattern("%v");
  spdlog::set_default_logger(logger);
  if (missing) {
    spdlog::warn(
        "the journal is not reachable (/run/systemd/journal/socket): logging to "
        "stderr instead");
  }
}

}  // namespace vfready::daemon::log
