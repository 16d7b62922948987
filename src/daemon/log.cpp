// SPDX-License-Identifier: Apache-2.0
#include "log.hpp"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

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

class JournalSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  JournalSink(std::shared_ptr<host::Journal> journal, std::string identifier)
      : journal_(std::move(journal)), identifier_(std::move(identifier)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::vector<std::string> fields;
    fields.push_back("MESSAGE=" + std::string(msg.payload.data(), msg.payload.size()));
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
  tls_fields = &fields;
  std::string line;
  if (!fields.vf.empty()) {
    line = "[" + fields.vf + "] ";
  } else if (!fields.pf.empty()) {
    line = "[" + fields.pf + "] ";
  }
  spdlog::log(level, "{}{}", line, model::printable(message));
  tls_fields = nullptr;
}

const Fields* current_fields() { return tls_fields; }

std::shared_ptr<spdlog::sinks::sink> make_journal_sink(std::shared_ptr<host::Journal> journal,
                                                       std::string identifier) {
  return std::make_shared<JournalSink>(std::move(journal), std::move(identifier));
}

void setup(Target target, std::shared_ptr<host::Journal> journal, const std::string& identifier) {
  const bool to_journal =
      target == Target::kJournal || (target == Target::kAuto && host::stderr_is_journal());
  std::shared_ptr<spdlog::logger> logger;
  if (to_journal) {
    logger = std::make_shared<spdlog::logger>(identifier,
                                              make_journal_sink(std::move(journal), identifier));
  } else {
    logger = spdlog::stderr_color_mt(identifier);
  }
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%v");
}

}  // namespace vfready::daemon::log
