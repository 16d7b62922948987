// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "vfready/model/status.hpp"

// vfready on D-Bus (sdbus-c++): the daemon's server and vfreadyctl's client. The
// interfaces are defined by the introspection XML next to bus.cpp; docs/dbus-api.md
// describes them.
namespace vfready::bus {

inline constexpr const char* kBusName = "org.vfready.vfready1";
inline constexpr const char* kManagerPath = "/org/vfready/vfready1";
inline constexpr const char* kManagerInterface = "org.vfready.vfready1.Manager";
inline constexpr const char* kPfInterface = "org.vfready.vfready1.PF";
inline constexpr const char* kPfPathPrefix = "/org/vfready/vfready1/pf/";

// A PF's object path: the PCI address escaped as sd_bus_path_encode does.
std::string pf_path(const std::string& pci);

// What the daemon does for the methods that change the node. reconcile answers the
// number of the pass that serves it. reload answers later (its read is off the loop),
// through `Answer`: an error message to refuse the call, or nothing; the call's reply
// waits for it.
struct Handlers {
  using Answer = std::function<void(std::optional<std::string>)>;
  std::function<uint64_t()> reconcile;
  std::function<void(Answer)> reload;
};

// What the loop waits on for the bus: fd, poll events and a deadline.
struct PollData {
  int fd = -1;
  short events = 0;
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

class Server {
 public:
  // Connects to `address` (empty: the system bus), exports the objects and takes the bus
  // name. Throws std::runtime_error naming the bus when that fails.
  static std::unique_ptr<Server> start(const std::string& address, Handlers handlers);
  virtual ~Server() = default;
  // Makes `status` what the properties and Describe() show; emits PropertiesChanged
  // for what changed.
  virtual void publish(const model::DaemonStatus& status) = 0;
  [[nodiscard]] virtual PollData poll_data() = 0;
  // Handles whatever arrived. Throws when the connection is lost.
  virtual void process() = 0;
};

// Why a client call failed.
class ClientError : public std::runtime_error {
 public:
  enum class Kind { kNotRunning, kAccessDenied, kRefused, kOther };
  ClientError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  [[nodiscard]] Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

class Client {
 public:
  // Empty address: the system bus ($DBUS_SYSTEM_BUS_ADDRESS redirects it).
  static std::unique_ptr<Client> connect(const std::string& address);
  virtual ~Client() = default;
  virtual std::string describe() = 0;
  virtual std::string describe_pf(const std::string& key) = 0;
  // Queues a pass over every PF; answers its number (QueueReconcile).
  virtual uint64_t reconcile() = 0;
  virtual void reload() = 0;
  // The ConfigGeneration property: it grows when a reload is in force.
  virtual uint32_t config_generation() = 0;
};

}  // namespace vfready::bus
