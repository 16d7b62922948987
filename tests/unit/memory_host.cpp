// SPDX-License-Identifier: Apache-2.0
#include "memory_host.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <stdexcept>
#include <utility>

namespace vfready::testing {

namespace {

constexpr const char* kMlx5 = "mlx5_core";

std::string vf_name(const MemoryHost::Pf& pf, uint16_t index) {
  return pf.info.netdev.value_or("eth") + "v" + std::to_string(index);
}

}  // namespace

MemoryHost::Pf& MemoryHost::add_pf(const std::string& pci, const std::string& netdev, bool ofed) {
  std::lock_guard lock(mu_);
  Pf pf;
  auto& i = pf.info;
  i.pci = model::PciAddress::parse(pci).value();
  i.vendor = 0x15b3;
  i.device = 0x1021;
  i.driver = kMlx5;
  i.netdev = netdev;
  i.ifindex = add_link(netdev);
  initialized_.insert(i.ifindex);
  i.sriov = true;
  i.totalvfs = 16;
  i.ib_device = "mlx5_" + std::to_string(pfs_.size());
  i.firmware = model::Version::parse("28.43.1014").value();
  i.node_guid = model::Guid{0xa088c20300301000ULL + (uint64_t{pfs_.size()} << 16)};
  i.ofed_sriov = ofed;
  i.ports = {{"InfiniBand", "4: ACTIVE", "5: LinkUp"}};
  return pfs_[pci] = std::move(pf);
}

MemoryHost::Pf& MemoryHost::pf(const std::string& pci) {
  std::lock_guard lock(mu_);
  return pfs_.at(pci);
}

model::HostInfo MemoryHost::host_info() {
  std::lock_guard lock(mu_);
  model::HostInfo host;
  host.kernel_release = "6.8.0-55-generic";
  host.modules = {
      {"mlx5_core", "24.10-0.7.0"}, {"mlx5_ib", "24.10-0.7.0"}, {"ib_core", {}}, {"ib_ipoib", {}}};
  for (auto& [pci, pf] : pfs_) {
    host.functions.push_back(*read_pf(pf.info.pci, true));
  }
  return host;
}

void MemoryHost::create_vfs(const std::string& pf_pci, uint16_t count, model::Guid guid_base) {
  std::lock_guard lock(mu_);
  Pf& pf = pfs_.at(pf_pci);
  pf.numvfs = count;
  for (uint16_t i = 0; i < count; ++i) {
    Vf vf;
    vf.pci = *pf.info.vf_address(i);
    vf.configured = guid_base.value() == 0 ? model::Guid{0} : model::Guid{guid_base.value() + i};
    pf.vfs.push_back(vf);
    probe(pf, pf.vfs.back(), i);
  }
}

void MemoryHost::move_to_pod(const std::string& pf_pci, uint16_t index) {
  std::lock_guard lock(mu_);
  Vf& vf = pfs_.at(pf_pci).vfs.at(index);
  drop_link(vf.ifindex);
  vf.ifindex = 0;
  vf.in_pod = true;
}

void MemoryHost::bind_to(const std::string& pf_pci, uint16_t index, const std::string& driver) {
  std::lock_guard lock(mu_);
  Vf& vf = pfs_.at(pf_pci).vfs.at(index);
  drop_link(vf.ifindex);
  vf.ifindex = 0;
  vf.driver = driver;
}

void MemoryHost::fail(const std::string& call, int err, int after) {
  std::lock_guard lock(mu_);
  failures_[call] = {err, after};
}

std::vector<std::string> MemoryHost::calls() {
  std::lock_guard lock(mu_);
  return calls_;
}

std::vector<std::string> MemoryHost::calls_named(const std::string& name) {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  std::copy_if(calls_.begin(), calls_.end(), std::back_inserter(out),
               [&](const std::string& c) { return c.starts_with(name + " "); });
  return out;
}

int MemoryHost::call(const std::string& name, const std::string& what) {
  calls_.push_back(name + " " + what);
  auto it = failures_.find(name);
  if (it == failures_.end()) {
    return 0;
  }
  if (it->second.after > 0) {
    --it->second.after;
    return 0;
  }
  return it->second.err;
}

void MemoryHost::unstick(const std::string& pf_pci, int err) {
  std::lock_guard lock(mu_);
  const auto it = stuck_.find(pf_pci);
  if (it == stuck_.end()) {
    return;
  }
  returned_.push_back({it->second, err});
  stuck_.erase(it);
  if (returns_) {
    const uint64_t one = 1;
    static_cast<void>(::write(*returns_, &one, sizeof one));
  }
  std::erase_if(failures_, [](const auto& f) { return f.second.err == host::kStuck; });
}

std::vector<host::ReturnedCall> MemoryHost::collect_returned() {
  std::lock_guard lock(mu_);
  uint64_t count = 0;
  if (returns_) {
    static_cast<void>(::read(*returns_, &count, sizeof count));
  }
  return std::exchange(returned_, {});
}

int MemoryHost::returns_fd() {
  std::lock_guard lock(mu_);
  if (!returns_) {
    returns_ = std::shared_ptr<int>(new int(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)), [](int* fd) {
      if (*fd >= 0) {
        ::close(*fd);
      }
      delete fd;
    });
    if (!returned_.empty()) {
      const uint64_t one = 1;
      static_cast<void>(::write(*returns_, &one, sizeof one));
    }
  }
  return *returns_;
}

int MemoryHost::call_on(const model::PciAddress& pf, const std::string& name,
                        const std::string& what) {
  return call_under(pf.str(), name, what);
}

int MemoryHost::call_under(const std::string& key, const std::string& name,
                           const std::string& what) {
  if (stuck_.contains(key)) {
    calls_.push_back(name + " " + what);
    return host::kStuck;
  }
  const int err = call(name, what);
  if (err == host::kStuck) {
    stuck_[key] = {key, name + " " + what, std::chrono::milliseconds(1000), host::Clock::now()};
  }
  return err;
}

std::optional<host::StuckCall> MemoryHost::stuck(const model::PciAddress& pf) {
  std::lock_guard lock(mu_);
  // A link request stuck on rtnl_lock keeps every PF stuck, as the system's host says.
  auto it = stuck_.find(pf.str());
  if (it == stuck_.end()) {
    it = stuck_.find(host::kLinksKey);
  }
  if (it == stuck_.end()) {
    return std::nullopt;
  }
  return it->second;
}

MemoryHost::Pf* MemoryHost::find_pf(const model::PciAddress& pci) {
  auto it = pfs_.find(pci.str());
  return it == pfs_.end() ? nullptr : &it->second;
}

MemoryHost::Vf* MemoryHost::find_vf(const model::PciAddress& pci, Pf** owner) {
  for (auto& [key, pf] : pfs_) {
    for (auto& vf : pf.vfs) {
      if (vf.pci == pci) {
        if (owner != nullptr) {
          *owner = &pf;
        }
        return &vf;
      }
    }
  }
  return nullptr;
}

int MemoryHost::add_link(const std::string& name) {
  const int ifindex = next_ifindex_++;
  links_[ifindex] = host::Link{ifindex, name, {}, 2044};
  announce({.ifindex = ifindex, .name = name, .mtu = 2044, .altnames = std::vector<std::string>{}});
  return ifindex;
}

void MemoryHost::drop_link(int ifindex) {
  if (const auto it = links_.find(ifindex); it != links_.end()) {
    announce({.removed = true, .ifindex = ifindex, .name = it->second.name});
    links_.erase(it);
  }
}

void MemoryHost::announce_link(int ifindex) {
  std::lock_guard lock(mu_);
  const auto& link = links_.at(ifindex);
  announce({.ifindex = ifindex, .name = link.name, .mtu = link.mtu, .altnames = link.altnames});
}

void MemoryHost::announce(host::LinkEvent event) {
  std::lock_guard lock(mu_);
  if (link_fd_ < 0) {
    return;
  }
  link_events_.push_back(std::move(event));
  const uint64_t one = 1;
  static_cast<void>(::write(link_fd_, &one, sizeof one));
}

// The link events of the host, as RTNLGRP_LINK announces them from when they are opened.
class MemoryHost::LinkFeed final : public host::LinkEvents {
 public:
  explicit LinkFeed(MemoryHost& host) : host_(host) {}
  ~LinkFeed() override {
    std::lock_guard lock(host_.mu_);
    ::close(host_.link_fd_);
    host_.link_fd_ = -1;
    host_.link_events_.clear();
  }
  LinkFeed(const LinkFeed&) = delete;
  LinkFeed& operator=(const LinkFeed&) = delete;
  [[nodiscard]] int fd() const override { return host_.link_fd_; }
  std::vector<host::LinkEvent> drain(bool* overflowed) override {
    std::lock_guard lock(host_.mu_);
    uint64_t count = 0;
    static_cast<void>(::read(host_.link_fd_, &count, sizeof count));
    *overflowed = false;
    return std::exchange(host_.link_events_, {});
  }

 private:
  MemoryHost& host_;
};

std::unique_ptr<host::LinkEvents> MemoryHost::open_link_events() {
  std::lock_guard lock(mu_);
  if (link_fd_ >= 0) {
    throw std::logic_error("MemoryHost: link events are already open");
  }
  link_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  return std::make_unique<LinkFeed>(*this);
}

int MemoryHost::probe(Pf& pf, Vf& vf, uint16_t index) {
  if (probe_fails.contains(vf.pci.str())) {
    kernel_log.push_back("mlx5_core: probe of " + vf.pci.str() + " failed with error -5");
    return EIO;
  }
  vf.driver = kMlx5;
  vf.effective = vf.configured;  // the VF driver reads its GUID now
  vf.in_pod = false;
  vf.ifindex = add_link(vf_name(pf, index));
  if (udev_initializes) {
    initialized_.insert(vf.ifindex);
  }
  return 0;
}

std::optional<host::Link> MemoryHost::link_named(const std::string& name) const {
  for (const auto& [ifindex, link] : links_) {
    if (link.name == name ||
        std::find(link.altnames.begin(), link.altnames.end(), name) != link.altnames.end()) {
      return link;
    }
  }
  return std::nullopt;
}

// --- host::SriovReads and host::SriovCalls

std::optional<model::PfInfo> MemoryHost::read_pf(const model::PciAddress& pci, bool with_vfs) {
  std::lock_guard lock(mu_);
  Pf* pf = find_pf(pci);
  if (pf == nullptr) {
    return std::nullopt;
  }
  auto info = pf->info;
  if (auto it = stuck_.find(pci.str()); it != stuck_.end()) {
    info.stuck = it->second.call;  // sriov_numvfs cannot be read: nothing of the VFs is seen
    info.numvfs = 0;
    return info;
  }
  info.numvfs = pf->numvfs;
  info.autoprobe = pf->autoprobe;
  info.netdev = links_.contains(info.ifindex)
                    ? std::optional<std::string>(links_.at(info.ifindex).name)
                    : std::nullopt;
  for (uint16_t i = 0; with_vfs && i < pf->numvfs; ++i) {
    info.vfs.push_back(read_vf(pci, i));
  }
  return info;
}

model::VfInfo MemoryHost::read_vf(const model::PciAddress& pci, uint16_t index) {
  std::lock_guard lock(mu_);
  model::VfInfo out;
  out.index = index;
  Pf* pf = find_pf(pci);
  if (pf == nullptr || index >= pf->vfs.size()) {
    return out;
  }
  const Vf& vf = pf->vfs[index];
  out.pci = vf.pci;
  out.driver = vf.driver;
  if (vf.ifindex != 0) {
    out.netdev = links_.at(vf.ifindex).name;
    out.ifindex = vf.ifindex;
  }
  if (pf->info.ofed_sriov) {
    out.node_guid = vf.configured;
    out.effective_guid = vf.effective;
  } else if (pf->vf_rdma && vf.driver == "mlx5_core") {
    out.node_guid = vf.effective;  // its RDMA device: the GUIDs it took at its probe
    out.effective_guid = vf.effective;
  }
  return out;
}

std::optional<model::PciAddress> MemoryHost::vf_address(const model::PciAddress& pci,
                                                        uint16_t index) {
  std::lock_guard lock(mu_);
  Pf* pf = find_pf(pci);
  if (pf == nullptr || index >= pf->vfs.size()) {
    return std::nullopt;
  }
  return pf->vfs[index].pci;
}

bool MemoryHost::has_ofed_sriov(const model::PciAddress& pci) {
  std::lock_guard lock(mu_);
  Pf* pf = find_pf(pci);
  return pf != nullptr && pf->info.ofed_sriov && !pf->vfs.empty();
}

host::VfBinding MemoryHost::vf_binding(const model::PciAddress& pci, uint16_t index) {
  const auto vf = read_vf(pci, index);
  return vf.netdev ? host::VfBinding{vf.netdev, {}, vf.ifindex} : host::VfBinding{{}, vf.driver};
}

std::optional<model::Guid> MemoryHost::vf_port_guid(const model::PciAddress& pci, uint16_t index,
                                                    bool /*ofed*/) {
  return read_vf(pci, index).effective_guid;
}

std::optional<std::string> MemoryHost::netdev_of(const model::PciAddress& function) {
  std::lock_guard lock(mu_);
  if (Pf* pf = find_pf(function); pf != nullptr && links_.contains(pf->info.ifindex)) {
    return links_.at(pf->info.ifindex).name;
  }
  if (Vf* vf = find_vf(function); vf != nullptr && vf->ifindex != 0) {
    return links_.at(vf->ifindex).name;
  }
  return std::nullopt;
}

std::unique_ptr<host::StartedCall<host::PortRead>> MemoryHost::start_read_port(
    const model::PciAddress& pci) {
  std::lock_guard lock(mu_);
  host::PortRead read;
  Pf* pf = find_pf(pci);
  if (pf == nullptr) {
    read.vanished = true;
    return host::answered(std::move(read));
  }
  read.netdev = links_.contains(pf->info.ifindex)
                    ? std::optional<std::string>(links_.at(pf->info.ifindex).name)
                    : std::nullopt;
  read.ib_device = pf->info.ib_device;
  if (!read.ib_device) {
    return host::answered(std::move(read));
  }
  ++port_reads;
  if (on_port_read) {
    on_port_read(pci);
  }
  if (stuck_.contains(pci.str())) {
    read.err = host::kStuck;
  } else if (port_read_err != 0) {
    read.err = port_read_err;
    read.unasked = port_read_err == host::kHelperGone;  // no answer of the driver's
  } else if (!pf->info.ports.empty()) {
    read.link_layer = pf->info.ports.front().link_layer;
    read.state = pf->info.ports.front().state;
  }
  return host::answered(std::move(read));
}

std::unique_ptr<host::StartedCall<host::VfRdmaReads>> MemoryHost::start_read_vf_rdma(
    const model::PciAddress& pf, std::span<const host::VfNetdev> vfs) {
  std::lock_guard lock(mu_);
  host::VfRdmaReads out;
  for (const auto& vf : vfs) {
    rdma_reads.push_back(vf);
    const auto found = vf_rdma.find(pf.str() + "/" + std::to_string(vf.index));
    out.push_back(found == vf_rdma.end() ? host::VfRdmaRead{} : found->second);
    if (stuck_.contains(pf.str()) && out.back().device) {
      out.back().err = host::kStuck;
    }
  }
  return host::answered(std::move(out));
}

std::vector<std::string> MemoryHost::kernel_log_naming(const std::string& device) {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& line : kernel_log) {
    if (line.find(device) != std::string::npos) {
      out.push_back(line);
    }
  }
  return out;
}

host::NetdevDevice MemoryHost::device_of_netdev(const std::string& netdev) {
  std::lock_guard lock(mu_);
  const auto link = link_named(netdev);
  if (!link) {
    return {};
  }
  for (auto& [key, pf] : pfs_) {
    if (pf.info.ifindex == link->ifindex) {
      return {key, {}};
    }
    for (const auto& vf : pf.vfs) {
      if (vf.ifindex == link->ifindex) {
        return {vf.pci.str(), key};
      }
    }
  }
  return {};
}

// As the system's host: the kernel's flag alone, written even for a PF stuck in a call.
int MemoryHost::set_autoprobe(const model::PciAddress& pci, bool on) {
  std::lock_guard lock(mu_);
  if (const int err = call("autoprobe", pci.str() + (on ? " 1" : " 0")); err != 0) {
    return err;
  }
  Pf* pf = find_pf(pci);
  if (pf == nullptr) {
    return ENOENT;
  }
  pf->autoprobe = on;
  return 0;
}

int MemoryHost::set_num_vfs(const model::PciAddress& pci, uint16_t count) {
  if (numvfs_throws.contains(pci.str())) {
    throw std::runtime_error("the sriov_numvfs write of PF " + pci.str() + " threw");
  }
  std::lock_guard lock(mu_);
  if (const int err = call_on(pci, "numvfs", pci.str() + " " + std::to_string(count)); err != 0) {
    return err;
  }
  Pf* pf = find_pf(pci);
  if (pf == nullptr || !pf->info.driver) {
    return ENOENT;
  }
  if (count > pf->info.totalvfs) {
    return ERANGE;
  }
  if (count == pf->numvfs) {
    return 0;
  }
  if (count != 0 && pf->numvfs != 0) {
    return EBUSY;
  }
  if (count == 0) {
    for (const auto& vf : pf->vfs) {
      drop_link(vf.ifindex);
    }
    pf->vfs.clear();
    pf->numvfs = 0;
    return 0;
  }
  pf->numvfs = count;
  for (uint16_t i = 0; i < count; ++i) {
    Vf vf;
    vf.pci = *pf->info.vf_address(i);
    pf->vfs.push_back(vf);
    if (pf->autoprobe) {
      probe(*pf, pf->vfs.back(), i);
    }
  }
  return 0;
}

host::OfedGuidErrors MemoryHost::set_vf_guids_ofed(
    const model::PciAddress& pf, std::span<const std::pair<uint16_t, model::Guid>> vfs,
    model::GuidPolicy policy) {
  host::OfedGuidErrors out;
  for (const auto& [index, guid] : vfs) {
    out.push_back(set_vf_guid_ofed(pf, index, guid, policy));
  }
  return out;
}

std::optional<host::OfedGuidError> MemoryHost::set_vf_guid_ofed(const model::PciAddress& pci,
                                                                uint16_t index, model::Guid guid,
                                                                model::GuidPolicy policy) {
  std::lock_guard lock(mu_);
  using File = host::OfedGuidError::File;
  Pf* pf = find_pf(pci);
  if (pf == nullptr || !pf->info.ofed_sriov || index >= pf->vfs.size()) {
    return host::OfedGuidError{File::kNode, ENOENT};
  }
  if (const int err =
          call_on(pci, "guid", pci.str() + " " + std::to_string(index) + " " + guid.str());
      err != 0) {
    return host::OfedGuidError{File::kPort, err};
  }
  pf->vfs[index].configured = guid;
  pf->vfs[index].policy = policy;
  return std::nullopt;
}

namespace {

// A call under way until its eventfd is written (release_probe) or its bound passes.
template <class T>
class HeldCall final : public host::StartedCall<T> {
 public:
  HeldCall(std::function<T()> make, std::function<T()> stuck, std::function<void(int)> gone,
           std::chrono::milliseconds bound)
      : make_(std::move(make)),
        stuck_(std::move(stuck)),
        gone_(std::move(gone)),
        fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
        until_(host::Clock::now() + bound) {}
  ~HeldCall() override {
    gone_(fd_);  // no longer released by the host
    ::close(fd_);
  }
  HeldCall(const HeldCall&) = delete;
  HeldCall& operator=(const HeldCall&) = delete;
  [[nodiscard]] int fd() const override { return fd_; }
  [[nodiscard]] host::Clock::time_point until() const override { return until_; }
  T finish() override {
    uint64_t n = 0;
    if (::read(fd_, &n, sizeof n) != sizeof n) {
      return stuck_();
    }
    return make_();
  }

 private:
  std::function<T()> make_;
  std::function<T()> stuck_;  // its answer past its bound
  std::function<void(int)> gone_;
  int fd_;
  host::Clock::time_point until_;
};

}  // namespace

std::unique_ptr<host::StartedCall<int>> MemoryHost::start_probe_vf(const model::PciAddress& pf,
                                                                   const model::PciAddress& vf) {
  {
    // Held and registered under one lock: a stop_holding() either sees it held and
    // releases it, or comes first and it is not held.
    std::lock_guard lock(mu_);
    if (hold_probes || held_pfs_.contains(pf.str())) {
      return held_call<int>([this, pf, vf] { return probe_vf(pf, vf); }, host::kStuck);
    }
  }
  return host::answered(probe_vf(pf, vf));
}

std::unique_ptr<host::StartedCall<int>> MemoryHost::start_set_num_vfs(const model::PciAddress& pf,
                                                                      uint16_t count) {
  if (hold_numvfs) {
    return held_call<int>([this, pf, count] { return set_num_vfs(pf, count); }, host::kStuck);
  }
  return host::answered(set_num_vfs(pf, count));
}

std::unique_ptr<host::StartedProbe> MemoryHost::start_read_probed_vf(const model::PciAddress& pf,
                                                                     const model::PciAddress& vf,
                                                                     uint16_t index, bool ofed) {
  if (hold_probe_reads) {
    // Past its bound, as a device call past its deadline: the PF is stuck, nothing read.
    return held_call<host::ProbedVf>(
        [this, pf, vf, index, ofed] { return read_probed_vf(pf, vf, index, ofed); },
        std::function<host::ProbedVf()>([this, pf, vf] {
          std::lock_guard lock(mu_);
          stuck_[pf.str()] = {pf.str(), "probe-read " + vf.str(), held_bound, host::Clock::now()};
          return host::ProbedVf{.err = host::kStuck, .bound = false, .driver = {}, .guid = {}};
        }));
  }
  return std::make_unique<host::AnsweredProbe>(read_probed_vf(pf, vf, index, ofed));
}

template <class T>
std::unique_ptr<host::StartedCall<T>> MemoryHost::held_call(std::function<T()> make, T stuck) {
  return held_call<T>(std::move(make), std::function<T()>([stuck] { return stuck; }));
}

template <class T>
std::unique_ptr<host::StartedCall<T>> MemoryHost::held_call(std::function<T()> make,
                                                            std::function<T()> stuck) {
  auto held = std::make_unique<HeldCall<T>>(
      std::move(make), std::move(stuck),
      [this](int fd) {
        std::lock_guard lock(mu_);
        std::erase(held_, fd);
      },
      held_bound);
  std::lock_guard lock(mu_);
  held_.push_back(held->fd());
  return held;
}

std::unique_ptr<host::StartedCall<host::OfedGuidErrors>> MemoryHost::start_set_vf_guids_ofed(
    const model::PciAddress& pf, std::span<const std::pair<uint16_t, model::Guid>> vfs,
    model::GuidPolicy policy) {
  std::vector<std::pair<uint16_t, model::Guid>> copy(vfs.begin(), vfs.end());
  if (!hold_guid_writes) {
    return host::answered(set_vf_guids_ofed(pf, copy, policy));
  }
  return held_call<host::OfedGuidErrors>(
      [this, pf, copy, policy] { return set_vf_guids_ofed(pf, copy, policy); },
      host::OfedGuidErrors(copy.size(),
                           host::OfedGuidError{host::OfedGuidError::File::kNode, host::kStuck}));
}

std::unique_ptr<host::StartedCall<host::LinkAnswer>> MemoryHost::start(
    const host::LinkRequest& request) {
  if (!hold_link_requests) {
    return host::LinksAtOnce::start(request);
  }
  return held_call<host::LinkAnswer>(
      [this, request] { return host::LinksAtOnce::start(request)->finish(); },
      host::LinkAnswer{host::kStuck});
}

std::unique_ptr<host::StartedCall<int>> MemoryHost::start_unbind_vf(const model::PciAddress& pf,
                                                                    const model::PciAddress& vf,
                                                                    const std::string& driver) {
  if (!hold_unbinds) {
    return host::answered(unbind_vf(pf, vf, driver));
  }
  return held_call<int>([this, pf, vf, driver] { return unbind_vf(pf, vf, driver); }, host::kStuck);
}

std::unique_ptr<host::StartedCall<host::ReadGuids>> MemoryHost::start_read_vf_guids(
    const model::PciAddress& pf, std::span<const uint16_t> indices, bool ofed) {
  std::vector<uint16_t> copy(indices.begin(), indices.end());
  {
    std::lock_guard lock(mu_);
    guid_reads.push_back(copy.size());
  }
  auto read = [this, pf, copy, ofed] {
    host::ReadGuids out;
    for (const auto index : copy) {
      out.push_back(stuck(pf) ? std::nullopt : vf_port_guid(pf, index, ofed));
    }
    return out;
  };
  if (!hold_guid_reads) {
    return host::answered(read());
  }
  // Past its bound, as a device call past its deadline: the PF is stuck, nothing read.
  return held_call<host::ReadGuids>(
      std::move(read), std::function<host::ReadGuids()>([this, pf, n = copy.size()] {
        std::lock_guard lock(mu_);
        stuck_[pf.str()] = {pf.str(), "guid-read " + pf.str(), held_bound, host::Clock::now()};
        return host::ReadGuids(n);
      }));
}

void MemoryHost::hold_probes_of(const std::string& pf_pci) {
  std::lock_guard lock(mu_);
  held_pfs_.insert(pf_pci);
}

void MemoryHost::stop_holding() {
  std::lock_guard lock(mu_);  // recursive: release_probe() takes it too
  held_pfs_.clear();
  while (release_probe()) {
  }
}

std::size_t MemoryHost::held_probes() {
  std::lock_guard lock(mu_);
  return held_.size();
}

bool MemoryHost::release_probe() {
  std::lock_guard lock(mu_);
  if (held_.empty()) {
    return false;
  }
  const uint64_t one = 1;
  const bool ok = ::write(held_.front(), &one, sizeof one) == sizeof one;
  held_.erase(held_.begin());
  return ok;
}

host::ProbedVf MemoryHost::read_probed_vf(const model::PciAddress& pf, const model::PciAddress& vf,
                                          uint16_t index, bool ofed) {
  host::ProbedVf out{.err = 0, .bound = false, .driver = {}, .guid = std::nullopt};
  {
    // kStuck at once for a stuck PF, as a device call for it answers; or as told.
    std::lock_guard lock(mu_);
    if (const int err = call_on(pf, "probe-read", vf.str()); err != 0) {
      out.err = err;
      return out;
    }
  }
  const auto binding = vf_binding(pf, index);
  out.bound = binding.netdev.has_value() || binding.driver.has_value();
  out.driver = binding.driver.value_or("");
  if (out.bound) {
    out.guid = vf_port_guid(pf, index, ofed);
  }
  return out;
}

int MemoryHost::probe_vf(const model::PciAddress& pf_pci, const model::PciAddress& pci) {
  if (probes_throw.contains(pf_pci.str())) {
    throw std::runtime_error("the probe of VF " + pci.str() + " threw");
  }
  std::lock_guard lock(mu_);
  if (const int err = call_on(pf_pci, "probe", pci.str()); err != 0) {
    return err;
  }
  Pf* pf = nullptr;
  Vf* vf = find_vf(pci, &pf);
  if (vf == nullptr) {
    return ENODEV;
  }
  // As drivers_probe: success whether a driver took the VF or not. The PCI core probes
  // a VF only while its PF's autoprobe is on; a bound one is left as it is.
  if (!vf->driver && pf->autoprobe) {
    probe(*pf, *vf, static_cast<uint16_t>(vf - pf->vfs.data()));
  }
  return 0;
}

int MemoryHost::unbind_vf(const model::PciAddress& pf_pci, const model::PciAddress& pci,
                          const std::string& driver) {
  std::lock_guard lock(mu_);
  if (const int err = call_on(pf_pci, "unbind", pci.str()); err != 0) {
    return err;
  }
  Vf* vf = find_vf(pci);
  if (vf == nullptr || vf->driver != driver) {
    return ENODEV;
  }
  drop_link(vf->ifindex);
  vf->ifindex = 0;
  vf->in_pod = false;
  vf->driver.reset();
  return 0;
}

// --- host::Links

std::optional<host::Link> MemoryHost::get(int ifindex) {
  std::lock_guard lock(mu_);
  auto it = links_.find(ifindex);
  return it == links_.end() ? std::nullopt : std::optional<host::Link>(it->second);
}

std::optional<host::Link> MemoryHost::by_name(const std::string& name) {
  std::lock_guard lock(mu_);
  return link_named(name);
}

int MemoryHost::rename(int ifindex, const std::string& name) {
  std::lock_guard lock(mu_);
  if (const int err = call_under(host::kLinksKey, "rename", std::to_string(ifindex) + " " + name);
      err != 0) {
    return err;
  }
  if (!links_.contains(ifindex)) {
    return ENODEV;
  }
  // dev_change_name(): its own name is no change; any other name in use, its own
  // altnames included, is EEXIST.
  if (links_[ifindex].name == name) {
    return 0;
  }
  if (link_named(name)) {
    return EEXIST;
  }
  links_[ifindex].name = name;
  announce({.ifindex = ifindex,
            .name = name,
            .mtu = links_[ifindex].mtu,
            .altnames = links_[ifindex].altnames});
  return 0;
}

std::optional<uint32_t> MemoryHost::netdev_mtu(const std::string& name) {
  std::lock_guard lock(mu_);
  const auto link = link_named(name);
  return link ? std::optional(link->mtu) : std::nullopt;
}

int MemoryHost::set_mtu(int ifindex, uint32_t mtu) {
  std::lock_guard lock(mu_);
  if (const int err =
          call_under(host::kLinksKey, "mtu", std::to_string(ifindex) + " " + std::to_string(mtu));
      err != 0) {
    return err;
  }
  if (!links_.contains(ifindex)) {
    return ENODEV;
  }
  links_[ifindex].mtu = mtu_cap != 0 ? std::min(mtu, mtu_cap) : mtu;
  announce({.ifindex = ifindex,
            .name = links_[ifindex].name,
            .mtu = links_[ifindex].mtu,
            .altnames = links_[ifindex].altnames});
  return 0;
}

// As the kernel's do_setlink: the MTU first, then the name, stopping at the first error.
int MemoryHost::rename_and_set_mtu(int ifindex, const std::string& name, uint32_t mtu) {
  if (const int err = set_mtu(ifindex, mtu); err != 0) {
    return err;
  }
  return rename(ifindex, name);
}

int MemoryHost::add_altname(int ifindex, const std::string& name) {
  std::lock_guard lock(mu_);
  if (const int err = call_under(host::kLinksKey, "altname", std::to_string(ifindex) + " " + name);
      err != 0) {
    return err;
  }
  if (!links_.contains(ifindex)) {
    return ENODEV;
  }
  if (link_named(name)) {
    return EEXIST;
  }
  links_[ifindex].altnames.push_back(name);
  return 0;
}

int MemoryHost::del_altname(int ifindex, const std::string& name) {
  std::lock_guard lock(mu_);
  call("delaltname", std::to_string(ifindex) + " " + name);
  auto it = links_.find(ifindex);
  if (it == links_.end()) {
    return ENODEV;
  }
  auto& alts = it->second.altnames;
  const auto found = std::find(alts.begin(), alts.end(), name);
  if (found == alts.end()) {
    return ENOENT;
  }
  alts.erase(found);
  return 0;
}

int MemoryHost::set_vf_guids(int pf_ifindex, uint32_t vf, model::Guid node, model::Guid port) {
  std::lock_guard lock(mu_);
  if (const int err =
          call_under(host::kLinksKey, "netlink-guid",
                     std::to_string(pf_ifindex) + " " + std::to_string(vf) + " " + port.str());
      err != 0) {
    return err;
  }
  static_cast<void>(node);
  for (auto& [key, pf] : pfs_) {
    if (pf.info.ifindex == pf_ifindex) {
      if (!pf.ipoib) {
        return EOPNOTSUPP;
      }
      if (vf >= pf.vfs.size()) {
        return EINVAL;
      }
      pf.vfs[vf].configured = port;
      return 0;
    }
  }
  return ENODEV;
}

// --- host::UdevWait

bool MemoryHost::initialized_now(int ifindex, Netdev /*netdev*/, bool /*ask*/) {
  std::lock_guard lock(mu_);
  return initialized_.contains(ifindex);
}

}  // namespace vfready::testing
