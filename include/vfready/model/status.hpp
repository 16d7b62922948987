// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <vector>

// What vfready reports: per PF and VF, what is there and what is wrong.
namespace vfready::model {

struct VfStatus {
  uint16_t index = 0;
  std::string pci;
  std::string name;
  std::vector<std::string> altnames;
  std::string guid;  // effective GUID as read back, "" when unknown
  int ifindex = 0;
  std::vector<std::string> problems;
};

enum class PfState { kPending, kReady, kFailed };
const char* to_string(PfState state);

struct PfStatus {
  std::string pci;
  std::string name;
  std::string link_layer;
  std::string port_state;
  PfState state = PfState::kPending;
  std::string step;  // the step running, or the one that failed
  std::vector<std::string> problems;
  std::vector<std::string> warnings;
  std::vector<VfStatus> vfs;
  uint32_t sriov_writes = 0;  // sriov_numvfs writes made
  double elapsed_ms = 0;
};

enum class Outcome { kReady, kDegraded, kFailed };
const char* to_string(Outcome outcome);

// ready: every PF ready; failed: none; degraded: some.
Outcome outcome_of(const std::vector<PfStatus>& pfs);

}  // namespace vfready::model
