// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <string_view>

// The events an operator looks for in the journal. Each has a MESSAGE_ID of its own
// and an entry in systemd/vfready.catalog that explains it and its remedy.
namespace vfready::model {

enum class EventKind {
  kReady,             // every configured PF is ready
  kDegraded,          // some PFs are ready, some failed
  kFailed,            // no PF is ready, or the driver check failed
  kDriverMismatch,    // a module does not fit the running kernel
  kEthernetFallback,  // a port runs Ethernet where InfiniBand is configured
  kFirmwareTooOld,    // firmware below the minimum for its device
  kGuidConflict,      // a VF in use carries another GUID than configured
  kNameConflict,      // a target name is held by a netdev vfready does not manage
};

struct EventInfo {
  EventKind kind;
  std::string_view name;        // short, for VFREADY_EVENT= and the docs
  std::string_view message_id;  // 32 hex digits, as journalctl shows it
};

inline constexpr std::array<EventInfo, 8> kEvents = {{
    {EventKind::kReady, "ready", "99bf23c319f44843ab34d9e0a3cca4b0"},
    {EventKind::kDegraded, "degraded", "000ba400a11b45e5b06312b99feaa586"},
    {EventKind::kFailed, "failed", "b0edcb1ab0f142ffbbed1ff88173f756"},
    {EventKind::kDriverMismatch, "driver-mismatch", "de43657756564999a536a15373fce95e"},
    {EventKind::kEthernetFallback, "ethernet-fallback", "22631b6c3b494f8c90bbb39e2e7b6b71"},
    {EventKind::kFirmwareTooOld, "firmware-too-old", "10214f53b3a646609524d13de6947293"},
    {EventKind::kGuidConflict, "guid-conflict", "b3ef9e1992e24d81ae3878e7a8ff815f"},
    {EventKind::kNameConflict, "name-conflict", "2707339803614861ba48d31a0e361b17"},
}};

constexpr const EventInfo& event_info(EventKind kind) {
  for (const auto& e : kEvents) {
    if (e.kind == kind) {
      return e;
    }
  }
  return kEvents.front();
}

}  // namespace vfready::model
