// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <spdlog/common.h>
#include <spdlog/sinks/sink.h>

#include <memory>
#include <optional>
#include <string>

#include "vfready/host/journal.hpp"
#include "vfready/model/events.hpp"

// Logging with structured fields. A line names what it is about (step, PF, VF,
// interface, key event); on the console that is a "[PF] " prefix, in the journal it is
// fields of the entry (VFREADY_STEP=, VFREADY_PF=, VFREADY_VF=, INTERFACE=, MESSAGE_ID=).
namespace vfready::daemon::log {

struct Fields {
  // Default member initializers let callers name only the fields they set.
  std::string step{};
  std::string pf{};          // PCI address
  std::string vf{};          // PCI address
  std::string interface {};  // netdev name
  std::optional<model::EventKind> event{};
};

void write(spdlog::level::level_enum level, const Fields& raw, const std::string& message);
inline void info(const Fields& f, const std::string& m) { write(spdlog::level::info, f, m); }
inline void warn(const Fields& f, const std::string& m) { write(spdlog::level::warn, f, m); }
inline void error(const Fields& f, const std::string& m) { write(spdlog::level::err, f, m); }

// The fields of the line being logged on this thread (for sinks), or nullptr.
const Fields* current_fields();

// A sink that sends each line as a journal entry with its fields.
std::shared_ptr<spdlog::sinks::sink> make_journal_sink(std::shared_ptr<host::Journal> journal,
                                                       std::string identifier);

enum class Target { kAuto, kJournal, kConsole };
// Sets the default logger: the journal (kAuto: when stderr is the journal's) or stderr.
void setup(Target target, std::shared_ptr<host::Journal> journal, const std::string& identifier);

}  // namespace vfready::daemon::log
