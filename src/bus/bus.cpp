// SPDX-License-Identifier: Apache-2.0
// The one file that uses sdbus-c++: the daemon's objects and vfreadyctl's calls.
#include "vfready/bus/bus.hpp"

#include <unistd.h>

#include <sdbus-c++/sdbus-c++.h>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>

#include "manager_adaptor.hpp"
#include "pf_adaptor.hpp"
#include "property_values.hpp"
#include "vfready/model/printable.hpp"
#include "vfready/model/status_json.hpp"

namespace vfready::bus {

namespace {

constexpr const char* kAccessDenied = "org.freedesktop.DBus.Error.AccessDenied";
constexpr const char* kRefusedError = "org.vfready.vfready1.Error.Refused";
constexpr const char* kNoSuchPf = "org.vfready.vfready1.Error.NoSuchPF";
constexpr const char* kInternal = "org.vfready.vfready1.Error.Internal";

// The error boundary of every method: what is not already a D-Bus error becomes
// org.vfready.vfready1.Error.Internal for the caller, never an exception that would
// reach the connection (and cost every client its daemon).
template <class F>
auto answer(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const sdbus::Error&) {
    throw;
  } catch (const std::exception& e) {
    throw sdbus::Error(kInternal, model::printable(e.what()));
  }
}

using EventStruct = sdbus::Struct<double, std::string, std::string, std::string>;
using StepStruct = sdbus::Struct<std::string, std::string, double, double>;
using VfStruct = sdbus::Struct<uint16_t, std::string, std::string, std::vector<std::string>,
                               std::string, std::vector<std::string>>;

std::vector<StepStruct> steps_value(const std::vector<model::StepTiming>& steps) {
  return mapped<StepStruct>(steps, [](const auto& s) {
    return StepStruct(s.name, model::to_string(s.state), s.started_ms, s.elapsed_ms);
  });
}

std::vector<VfStruct> vfs_value(const std::vector<model::VfStatus>& vfs) {
  return mapped<VfStruct>(vfs, [](const auto& v) {
    return VfStruct(v.index, v.pci.str(), v.name, v.altnames, v.guid ? v.guid->str() : "",
                    model::texts(v.problems));
  });
}

std::unique_ptr<sdbus::IConnection> open(const std::string& address) {
  return address.empty() ? sdbus::createSystemBusConnection()
                         : sdbus::createSessionBusConnectionWithAddress(address);
}

class ServerImpl;

class PfObject final : public sdbus::AdaptorInterfaces<org::vfready::vfready1::PF_adaptor> {
 public:
  // `started_unix_ms`: the daemon's start, for the dates of the PF's steps.
  PfObject(sdbus::IConnection& connection, model::PfStatus pf, int64_t started_unix_ms)
      : AdaptorInterfaces(connection, pf_path(pf.pci.str())),
        pf_(std::move(pf)),
        started_unix_ms_(started_unix_ms) {
    registerAdaptor();
  }
  virtual ~PfObject() { unregisterAdaptor(); }
  PfObject(const PfObject&) = delete;
  PfObject& operator=(const PfObject&) = delete;

  void update(const model::PfStatus& pf) {
    const auto changed = changed_names({{"Name", pf.name == pf_.name},
                                        {"State", pf.state == pf_.state},
                                        {"Step", pf.step == pf_.step},
                                        {"LinkLayer", pf.link_layer == pf_.link_layer},
                                        {"PortState", pf.port_state == pf_.port_state},
                                        {"Problems", pf.problems == pf_.problems},
                                        {"ProblemCodes", pf.problems == pf_.problems},
                                        {"Warnings", pf.warnings == pf_.warnings},
                                        {"Steps", pf.steps == pf_.steps},
                                        {"VFs", vfs_value(pf.vfs) == vfs_value(pf_.vfs)}});
    pf_ = pf;
    if (!changed.empty()) {
      getObject().emitPropertiesChangedSignal(INTERFACE_NAME, changed);
    }
  }

 private:
  std::string Describe() override {
    return answer([&] { return model::json_text(pf_, started_unix_ms_); });
  }
  std::string PciAddress() override { return pf_.pci.str(); }
  std::string Name() override { return pf_.name; }
  std::string State() override { return model::to_string(pf_.state); }
  std::string Step() override { return pf_.step; }
  std::string LinkLayer() override { return pf_.link_layer; }
  std::string PortState() override { return pf_.port_state; }
  std::vector<std::string> Problems() override { return model::texts(pf_.problems); }
  std::vector<std::string> ProblemCodes() override { return codes(pf_.problems); }
  std::vector<std::string> Warnings() override { return model::texts(pf_.warnings); }
  std::vector<StepStruct> Steps() override { return steps_value(pf_.steps); }
  std::vector<VfStruct> VFs() override { return vfs_value(pf_.vfs); }

  model::PfStatus pf_;
  int64_t started_unix_ms_ = 0;
};

class ManagerObject final
    : public sdbus::AdaptorInterfaces<org::vfready::vfready1::Manager_adaptor> {
 public:
  ManagerObject(sdbus::IConnection& connection, Handlers handlers)
      : AdaptorInterfaces(connection, kManagerPath), handlers_(std::move(handlers)) {
    registerAdaptor();
  }
  virtual ~ManagerObject() { unregisterAdaptor(); }

  void update(const model::DaemonStatus& s, bool pfs_changed) {
    const auto changed =
        changed_names({{"State", s.state == status_.state},
                       {"ConfigGeneration", s.config_generation == status_.config_generation},
                       {"StatusText", s.text == status_.text},
                       {"Problems", s.problems == status_.problems},
                       {"ProblemCodes", s.problems == status_.problems},
                       {"Steps", model::overall_steps(s.pfs) == model::overall_steps(status_.pfs)},
                       {"PFs", !pfs_changed},
                       {"VFCount", model::vf_count(s) == model::vf_count(status_)},
                       {"RecentEvents", events_value(s) == events_value(status_)}});
    status_ = s;
    if (!changed.empty()) {
      getObject().emitPropertiesChangedSignal(INTERFACE_NAME, changed);
    }
  }

 private:
  // Changing the node is for root: the bus policy says so, and so does this check, for
  // buses without that policy.
  void require_root(const char* method) {
    const auto* message = getObject().getCurrentlyProcessedMessage();
    if (message == nullptr || message->getCredsUid() != 0) {
      throw sdbus::Error(kAccessDenied, std::string(method) + " is only allowed to root");
    }
  }
  const model::PfStatus& pf(const std::string& key) {
    const auto* found = model::find_pf(status_, key);
    if (found == nullptr) {
      throw sdbus::Error(kNoSuchPf, "no configured PF or VF has the PCI address or name \"" +
                                        model::printable_head(key) + "\"");
    }
    return *found;
  }

  std::string Describe() override {
    return answer([&] { return model::json_text(status_); });
  }
  std::string DescribePF(const std::string& key) override {
    return answer([&] { return model::json_text(pf(key), status_.started_unix_ms); });
  }
  sdbus::ObjectPath GetPF(const std::string& key) override {
    return answer([&] { return sdbus::ObjectPath(pf_path(pf(key).pci.str())); });
  }
  void Reconcile() override {
    answer([&] {
      require_root("Reconcile");
      handlers_.reconcile();
    });
  }
  uint64_t QueueReconcile() override {
    return answer([&] {
      require_root("QueueReconcile");
      return handlers_.reconcile();
    });
  }
  void Reload(sdbus::Result<>&& result) override {
    answer([&] {
      require_root("Reload");
      // Answered later, from the loop, once the configuration is read. Kept here, dropped
      // before the connection it holds a raw pointer to; the daemon gets a weak handle.
      std::erase_if(replies_, [](const auto& r) { return !r->has_value(); });
      auto reply = replies_.emplace_back(
          std::make_shared<std::optional<sdbus::Result<>>>(std::move(result)));
      handlers_.reload([weak = std::weak_ptr(reply)](const std::optional<std::string>& refusal) {
        const auto r = weak.lock();
        if (!r || !r->has_value()) {
          return;  // the connection it came on is gone
        }
        try {
          refusal ? (*r)->returnError(sdbus::Error(kRefusedError, model::printable(*refusal)))
                  : (*r)->returnResults();
        } catch (const sdbus::Error&) {  // the caller is gone
        }
        r->reset();
      });
    });
  }
  std::string Version() override { return status_.version; }
  std::string ConfigFile() override { return status_.config_file; }
  uint32_t ConfigGeneration() override { return status_.config_generation; }
  std::string State() override { return model::to_string(status_.state); }
  std::string StatusText() override { return status_.text; }
  std::vector<std::string> Problems() override { return model::texts(status_.problems); }
  std::vector<std::string> ProblemCodes() override { return model::codes(status_.problems); }
  std::vector<StepStruct> Steps() override {
    return steps_value(model::overall_steps(status_.pfs));
  }
  std::vector<sdbus::ObjectPath> PFs() override {
    return mapped<sdbus::ObjectPath>(
        status_.pfs, [](const auto& pf) { return sdbus::ObjectPath(pf_path(pf.pci.str())); });
  }
  uint32_t VFCount() override { return model::vf_count(status_); }
  std::vector<EventStruct> RecentEvents() override { return events_value(status_); }
  static std::vector<EventStruct> events_value(const model::DaemonStatus& s) {
    return mapped<EventStruct>(
        s.recent_events, [](const auto& e) { return EventStruct(e.at_ms, e.pf, e.vf, e.message); });
  }

  Handlers handlers_;
  model::DaemonStatus status_;
  std::vector<std::shared_ptr<std::optional<sdbus::Result<>>>> replies_;  // Reload's, unsent
};

class ServerImpl final : public Server {
 public:
  ServerImpl(const std::string& address, Handlers handlers)
      : connection_(open(address)),
        manager_(std::make_unique<ManagerObject>(*connection_, std::move(handlers))) {
    connection_->requestName(kBusName);
  }
  ~ServerImpl() override = default;  // the objects go first, then the connection

  void publish(const model::DaemonStatus& raw) override {
    // D-Bus carries valid UTF-8 only; netdev names (and so messages) may be any bytes.
    // A copy made printable only when some text is not: it is the whole status.
    std::optional<model::DaemonStatus> cleaned;
    const auto& status = model::is_printable(raw) ? raw : cleaned.emplace(model::printable(raw));
    // Every object in pfs_ stays whole whatever throws (ENOTCONN: the bus dropped us).
    bool pfs_changed =
        std::erase_if(pfs_, [&](const auto& object) {
          return std::none_of(status.pfs.begin(), status.pfs.end(),
                              [&](const auto& pf) { return pf.pci.str() == object.first; });
        }) > 0;  // objects of PFs no longer configured go away
    for (const auto& pf : status.pfs) {
      const auto pci = pf.pci.str();
      if (auto it = pfs_.find(pci); it != pfs_.end()) {
        it->second->update(pf);
      } else {
        auto object = std::make_unique<PfObject>(*connection_, pf, status.started_unix_ms);
        pfs_.emplace(pci, std::move(object));
        pfs_changed = true;
      }
    }
    manager_->update(status, pfs_changed);
  }

  PollData poll_data() override {
    const auto data = connection_->getEventLoopPollData();
    PollData out{data.fd, data.events, std::nullopt};
    if (data.timeout_usec != std::numeric_limits<uint64_t>::max()) {
      out.deadline = std::chrono::steady_clock::time_point(
          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
              std::chrono::microseconds(data.timeout_usec)));
    }
    return out;
  }

  void process() override {
    while (connection_->processPendingRequest()) {
    }
  }

 private:
  std::unique_ptr<sdbus::IConnection> connection_;  // declared first: destroyed last
  std::unique_ptr<ManagerObject> manager_;
  std::map<std::string, std::unique_ptr<PfObject>> pfs_;
};

class ClientImpl final : public Client {
 public:
  explicit ClientImpl(const std::string& address) : connection_(connect_or_throw(address)) {
    proxy_ = sdbus::createProxy(*connection_, kBusName, kManagerPath);
  }

  std::string describe() override {
    std::string json;
    call("Describe", [&](sdbus::MethodInvoker& m) { m.storeResultsTo(json); });
    return json;
  }
  std::string describe_pf(const std::string& key) override {
    std::string json;
    call("DescribePF", [&](sdbus::MethodInvoker& m) { m.withArguments(key).storeResultsTo(json); });
    return json;
  }
  uint64_t reconcile() override {
    uint64_t pass = 0;
    call("QueueReconcile", [&](sdbus::MethodInvoker& m) { m.storeResultsTo(pass); });
    return pass;
  }
  void reload() override {
    call("Reload", [](sdbus::MethodInvoker& m) { m.storeResultsTo(); });
  }
  uint32_t config_generation() override {
    try {
      return proxy_->getProperty("ConfigGeneration").onInterface(kManagerInterface).get<uint32_t>();
    } catch (const sdbus::Error& e) {
      throw client_error("ConfigGeneration", e);
    }
  }

 private:
  static std::unique_ptr<sdbus::IConnection> connect_or_throw(const std::string& address) {
    try {
      return open(address);
    } catch (const sdbus::Error& e) {
      throw ClientError(ClientError::Kind::kNotRunning,
                        "cannot reach the " +
                            (address.empty() ? std::string("system bus") : "bus " + address) +
                            ": " + e.getMessage());
    }
  }

  // What a failed call or property read means to vfreadyctl.
  static ClientError client_error(const char* member, const sdbus::Error& e) {
    const auto& name = e.getName();
    auto kind = ClientError::Kind::kOther;
    if (name == "org.freedesktop.DBus.Error.ServiceUnknown" ||
        name == "org.freedesktop.DBus.Error.NameHasNoOwner") {
      return {ClientError::Kind::kNotRunning,
              "vfreadyd is not running (nothing owns " + std::string(kBusName) + " on the bus)"};
    }
    if (name == kAccessDenied) {
      // The policy's or vfreadyd's own words say less than this: what needs root.
      const std::string verb = std::string(member).ends_with("Reconcile") ? "reconcile"
                               : std::string(member) == "Reload"          ? "reload"
                                                                          : member;
      return {ClientError::Kind::kAccessDenied, verb + " needs root"};
    }
    if (name == kRefusedError || name == kNoSuchPf) {
      kind = ClientError::Kind::kRefused;
    }
    return {kind, std::string(member) + ": " + e.getMessage()};
  }

  template <typename F>
  void call(const char* method, F&& finish) {
    try {
      // The invoker keeps a reference to the name: it must outlive the invoker.
      const std::string name(method);
      auto invoker = proxy_->callMethod(name);
      invoker.onInterface(kManagerInterface).withTimeout(std::chrono::seconds(10));
      finish(invoker);
    } catch (const sdbus::Error& e) {
      throw client_error(method, e);
    }
  }

  std::unique_ptr<sdbus::IConnection> connection_;
  std::unique_ptr<sdbus::IProxy> proxy_;
};

}  // namespace

std::unique_ptr<Server> Server::start(const std::string& address, Handlers handlers) {
  try {
    return std::make_unique<ServerImpl>(address, std::move(handlers));
  } catch (const sdbus::Error& e) {
    throw std::runtime_error("cannot serve " + std::string(kBusName) + " on the " +
                             (address.empty() ? std::string("system bus") : "bus " + address) +
                             ": " + e.getMessage());
  }
}

std::unique_ptr<Client> Client::connect(const std::string& address) {
  return std::make_unique<ClientImpl>(address);
}

}  // namespace vfready::bus
