// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "../unit/memory_host.hpp"
#include "host_access.hpp"

namespace vfready::testing {

// The two PFs the daemon's tests on MemoryHost bring up.
constexpr const char* kPf0 = "0000:18:00.0";
constexpr const char* kPf1 = "0000:40:00.0";
inline void add_two_pfs(MemoryHost& host) {
  host.add_pf(kPf0, "ibp24s0");
  host.add_pf(kPf1, "ibp64s0");
}
// A configuration of both, `vfs` VFs each, with bounds short enough for a test.
inline std::string two_pf_config(int vfs) {
  return R"({"pfs": [{"select": {"pci": [")" + std::string(kPf0) + R"(", ")" + kPf1 +
         R"("]}, "vfs": )" + std::to_string(vfs) + R"(,
      "pf_name": "ibs{pf_index}", "vf_name": "ibs{pf_index}v{vf}"}],
      "timeouts": {"udev_ms": 50, "port_active_ms": 300}})";
}

// The host access of a test: every PF's worker works on one MemoryHost.
class MemoryHostAccess final : public daemon::HostAccess {
 public:
  explicit MemoryHostAccess(std::shared_ptr<MemoryHost> host) : host_(std::move(host)) {}
  std::shared_ptr<host::UdevWait> listen(const daemon::BringupInputs& /*in*/) override {
    return {host_, host_.get()};  // shares the host's life
  }
  model::HostInfo read_host(const daemon::BringupInputs& /*in*/,
                            const ReadProgress& /*progress*/) override {
    return host_->host_info();
  }
  std::unique_ptr<daemon::OwnedPfHost> pf_host(const daemon::BringupInputs& /*in*/,
                                               host::UdevWait& udev) override {
    return std::make_unique<Os>(*host_, udev);
  }
  std::vector<host::ReturnedCall> returned(const daemon::BringupInputs& /*in*/) override {
    return host_->collect_returned();
  }
  int returns_fd(const daemon::BringupInputs& /*in*/) override { return host_->returns_fd(); }
  void pass_over(const daemon::BringupInputs& /*in*/) override {}
  std::unique_ptr<daemon::DriftReads> drift_reads(const daemon::BringupInputs& /*in*/) override {
    return std::make_unique<Drift>(host_);
  }

 private:
  struct Os final : daemon::OwnedPfHost {
    Os(MemoryHost& h, host::UdevWait& udev) : os{h, h, h, udev} {}
    pipeline::PfHost& host() override { return os; }
    pipeline::PfHost os;
  };
  struct Drift final : daemon::DriftReads {
    explicit Drift(std::shared_ptr<MemoryHost> h)
        : memory(std::move(h)), feed(memory->open_link_events()) {}
    host::LinkEvents& events() override { return *feed; }
    std::optional<std::string> link_name(int ifindex) override {
      auto link = memory->get(ifindex);
      return link ? std::optional(link->name) : std::nullopt;
    }
    std::optional<uint32_t> netdev_mtu(const std::string& name) override {
      return memory->netdev_mtu(name);
    }
    host::NetdevDevice device_of_netdev(const std::string& name) override {
      return memory->device_of_netdev(name);
    }
    std::shared_ptr<MemoryHost> memory;  // outlives the feed
    std::unique_ptr<host::LinkEvents> feed;
  };
  std::shared_ptr<MemoryHost> host_;
};

}  // namespace vfready::testing
