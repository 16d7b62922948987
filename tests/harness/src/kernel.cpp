// SPDX-License-Identifier: Apache-2.0
// What the fake kernel does when sysfs is written: SR-IOV enable/disable with the
// errnos and blocking of drivers/pci/iov.c, VF probes (binding: kernel_binding.cpp),
// VF GUIDs as MLNX_OFED's sriov sysfs keeps them, and netdevs that come and go.
#include <cerrno>
#include <optional>
#include <string_view>

#include "kernel.hpp"

namespace vfready::fakehost {

namespace {

// kstrtou16(buf, 0, ...): optional '+', base from the prefix (0x hex, 0 octal),
// one trailing newline; EINVAL for anything else, ERANGE past 65535.
int kstrtou16(std::string_view v, uint16_t* out) {
  v = chomp(v);
  if (!v.empty() && v.front() == '+') {
    v.remove_prefix(1);
  }
  int base = 10;
  if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
    base = 16;
    v.remove_prefix(2);
  } else if (v.size() > 1 && v[0] == '0') {
    base = 8;
    v.remove_prefix(1);
  }
  if (v.empty()) {
    return EINVAL;
  }
  uint64_t value = 0;
  for (char c : v) {
    int digit = 0;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      return EINVAL;
    }
    if (digit >= base) {
      return EINVAL;
    }
    value = value * static_cast<uint64_t>(base) + static_cast<uint64_t>(digit);
    if (value > 0xffff) {
      return ERANGE;
    }
  }
  *out = static_cast<uint16_t>(value);
  return 0;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  return c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

// MLNX_OFED's sriov/<n>/node and port stores: sscanf(buf, "%02x:%02x:...:%02x\n") and
// EINVAL unless all 8 convert, as the kernel's vsscanf() (lib/vsprintf.c) does: each field
// skips white space, needs a hex digit, takes at most 2 characters (simple_strntoull(): a
// "0x" prefix is skipped and, as it fills the width, converts to 0); each ':' must be
// there; what follows the eighth field is not looked at.
std::optional<model::Guid> ofed_guid(std::string_view v) {
  uint64_t guid = 0;
  std::size_t at = 0;
  for (int field = 0; field < 8; ++field) {
    if (field > 0) {
      if (at >= v.size() || v[at] != ':') {
        return std::nullopt;
      }
      ++at;
    }
    while (at < v.size() && (v[at] == ' ' || (v[at] >= '\t' && v[at] <= '\r'))) {
      ++at;
    }
    if (at >= v.size() || hex_digit(v[at]) < 0) {
      return std::nullopt;
    }
    uint64_t byte = 0;
    if (v[at] == '0' && at + 1 < v.size() && (v[at + 1] == 'x' || v[at + 1] == 'X')) {
      at += 2;  // the prefix fills the field: nothing converted, 0
    } else {
      for (int n = 0; n < 2 && at < v.size() && hex_digit(v[at]) >= 0; ++n, ++at) {
        byte = byte * 16 + static_cast<uint64_t>(hex_digit(v[at]));
      }
    }
    guid = (guid << 8) | byte;
  }
  return model::Guid(guid);
}

bool is_error_line(const std::string& line) {
  return line.find("fail") != std::string::npos ||
         line.find("Unknown symbol") != std::string::npos ||
         line.find("error") != std::string::npos;
}

}  // namespace

Kernel::Kernel(const Topology& topology, Tree& tree, Netdevs& netdevs, UdevSim& udev,
               HostLogs& logs)
    : topology_(topology), tree_(tree), netdevs_(netdevs), udev_(udev), logs_(logs) {
  udev_.set_describe([this](int ifindex) { return describe_netdev(ifindex); });
  udev_.set_naming([this](int ifindex) { return udev_rules(ifindex); },
                   [this](int ifindex, const UdevNaming& naming) { udev_apply(ifindex, naming); });
}

void Kernel::boot() {
  for (const auto& line : topology_.kernel_log) {
    logs_.kmsg(is_error_line(line) ? 3 : 6, line);
  }
  {
    std::lock_guard lock(mu_);
    for (const auto& spec : topology_.functions) {
      auto pf = std::make_unique<Pf>();
      pf->index = pfs_.size();
      pf->spec = &spec;
      pf->bound = spec.driver.has_value();
      functions_[spec.pci] = Owner{pfs_.size(), std::nullopt};
      pfs_.push_back(std::move(pf));
    }
  }
  lay_out_drivers_and_modules();
  for (auto& pf : pfs_) {
    lay_out_pf(*pf);
  }
  for (std::size_t i = 0; i < pfs_.size(); ++i) {
    if (pfs_[i]->bound && pfs_[i]->spec->netdev) {
      bring_up_netdev(i, std::nullopt, *pfs_[i]->spec->netdev, /*at_boot=*/true);
    }
  }
}

void Kernel::shutdown() {
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
}

void Kernel::release_hangs() {
  lay_out_modules(/*late=*/true);
  {
    std::lock_guard lock(stop_mu_);
    released_ = true;
  }
  stop_cv_.notify_all();
}

bool Kernel::hang_until_released() {
  logs_.hang();
  std::unique_lock lock(stop_mu_);
  stop_cv_.wait(lock, [this] { return stopping_ || released_; });
  return !stopping_;
}

bool Kernel::pause_ms(uint32_t ms) {
  std::unique_lock lock(stop_mu_);
  return !stop_cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stopping_; });
}

Kernel::NetRef Kernel::net_of(const Owner& owner) {
  Pf& pf = *pfs_[owner.pf];
  if (owner.vf) {
    Vf& vf = pf.vfs[*owner.vf];
    return {vf.dir, vf.ifindex, vf.ifname};
  }
  return {pf.dir, pf.ifindex, pf.ifname};
}

std::string Kernel::read_numvfs(Pf& pf) {
  std::lock_guard device(pf.sriov_mu);
  std::lock_guard lock(mu_);
  return std::to_string(pf.vfs.size()) + "\n";
}

int Kernel::write_numvfs(Pf& pf, std::string_view value) {
  uint16_t count = 0;
  // sriov_numvfs_store(): any kstrtou16() error, ERANGE past 65535 included, is EINVAL.
  if (kstrtou16(value, &count) != 0) {
    return EINVAL;
  }
  const auto& spec = *pf.spec;
  if (count > spec.sriov->totalvfs) {
    return ERANGE;
  }
  std::lock_guard device(pf.sriov_mu);
  std::size_t current = 0;
  bool bound = false;
  {
    std::lock_guard lock(mu_);
    current = pf.vfs.size();
    bound = pf.bound;
  }
  if (count == current) {
    return 0;
  }
  if (!bound) {
    return ENOENT;
  }
  // The core refuses a count over VFs that exist itself (pci_warn(), the PF's driver
  // named), before the rescan lock and the driver.
  if (count != 0 && current != 0) {
    logs_.kmsg(4, "mlx5_core " + spec.pci.str() + ": " + std::to_string(current) +
                      " VFs already enabled. Disable before enabling " + std::to_string(count) +
                      " VFs");
    return EBUSY;
  }
  // From here on the driver's sriov_configure runs: where the topology's faults act.
  // Newer kernels run it under the global PCI rescan lock, and only it: one PF's at a time.
  std::unique_lock<std::mutex> rescan;
  if (topology_.serializes_sriov_configure) {
    rescan = std::unique_lock(rescan_mu_);
  }
  if (spec.faults.numvfs_errno != 0) {
    return spec.faults.numvfs_errno;
  }
  if (spec.faults.numvfs_write_hangs && !hang_until_released()) {
    return EIO;
  }
  if (count == 0) {
    disable_vfs(pf.index);
    return 0;
  }
  enable_vfs(pf.index, count);
  return pause_ms(0) ? 0 : EIO;
}

int Kernel::write_autoprobe(Pf& pf, std::string_view value) {
  // kstrtobool() (lib/kstrtox.c) on the bytes as written: its first byte decides (y, t,
  // 1 on; n, f, 0 off), or "on"/"of..." its first two; nothing else is looked at. (The
  // VM's 6.12 refused e and d: tests/vm/sysfs-answers.kernel.)
  if (value.empty()) {
    return EINVAL;  // a write(2) of no bytes never reaches the store
  }
  bool on = false;
  switch (value[0]) {
    case 'y':
    case 'Y':
    case 't':
    case 'T':
    case '1':
      on = true;
      break;
    case 'n':
    case 'N':
    case 'f':
    case 'F':
    case '0':
      break;
    case 'o':
    case 'O': {
      const char second = value.size() > 1 ? value[1] : '\0';
      if (second != 'n' && second != 'N' && second != 'f' && second != 'F') {
        return EINVAL;
      }
      on = second == 'n' || second == 'N';
      break;
    }
    default:
      return EINVAL;
  }
  std::lock_guard lock(mu_);
  pf.autoprobe = on;
  return 0;
}

void Kernel::enable_vfs(std::size_t index, uint16_t count) {
  Pf& pf = *pfs_[index];
  bool autoprobe = false;
  for (uint16_t i = 0; i < count; ++i) {
    {
      std::lock_guard lock(mu_);
      const auto pci = pf.spec->vf_address(i).value();
      Vf vf{.index = i, .pci = pci, .dir = vf_dir(pf, pci)};
      functions_[vf.pci] = Owner{index, i};
      pf.vfs.push_back(vf);
      lay_out_vf(pf, pf.vfs.back());
      autoprobe = pf.autoprobe;
    }
    // As pci_iov_add_virtfn: each VF is added, then probed, before the next one.
    if (autoprobe) {
      if (!lock_vf(pf, i)) {
        continue;
      }
      const VfUnlock unlock{this, &pf, i};
      // Taken, or named for another driver, while this waited for the VF's lock: the
      // driver core's attach leaves a device with a driver alone and matches by
      // driver_override (__device_attach(), pci_match_device()).
      std::string other;
      {
        std::lock_guard lock(mu_);
        const auto& vf = pf.vfs[i];
        if (vf.bound || !vf.held_by.empty()) {
          continue;
        }
        if (vf.driver_override != "mlx5_core") {
          other = vf.driver_override;
        }
      }
      if (!other.empty()) {
        hold_vf_locked(pf, i, other);
        continue;
      }
      if (probe_vf(index, i) == EIO && !pause_ms(0)) {
        return;
      }
    }
  }
}

void Kernel::disable_vfs(std::size_t index) {
  Pf& pf = *pfs_[index];
  std::size_t count = 0;
  {
    std::lock_guard lock(mu_);
    count = pf.vfs.size();
  }
  // As sriov_del_vfs(): VF 0 first, each under its device lock, kept until every VF is
  // gone: a bind that waited for it then finds no VF.
  for (std::size_t i = 0; i < count; ++i) {
    if (!lock_vf(pf, static_cast<uint16_t>(i))) {
      continue;
    }
    let_go_of_netdev(pf, static_cast<uint16_t>(i));
    std::lock_guard lock(mu_);
    remove_vf_layout(pf, pf.vfs[i]);
    functions_.erase(pf.vfs[i].pci);
  }
  std::lock_guard lock(mu_);
  pf.vfs.clear();
  vf_lock_cv_.notify_all();
}

int Kernel::probe_vf(std::size_t index, uint16_t i) {
  Pf& pf = *pfs_[index];
  // mlx5's probe says the firmware's version first (dev_info() in its init, before its
  // first command), then talks to the firmware: the probe's time.
  if (pf.spec->infiniband) {
    std::string pci;
    {
      std::lock_guard lock(mu_);
      pci = i < pf.vfs.size() ? pf.vfs[i].pci.str() : "";
    }
    if (!pci.empty()) {
      logs_.kmsg(6, "mlx5_core " + pci + ": firmware version: " + pf.spec->infiniband->fw_ver);
    }
  }
  if (!pause_ms(pf.spec->sriov->vf_probe_ms)) {
    return EIO;
  }
  // A VF whose firmware never answers the driver's probe: until SIGUSR1 or the end.
  if (pf.spec->faults.probe_hang_vfs.contains(i) && !hang_until_released()) {
    return EIO;
  }
  std::string name;
  model::PciAddress pci = pf.spec->pci;
  model::Guid guid{0};
  const bool fails = pf.spec->faults.probe_fail_vfs.contains(i);
  {
    std::lock_guard lock(mu_);
    if (i >= pf.vfs.size()) {
      return ENODEV;
    }
    Vf& vf = pf.vfs[i];
    pci = vf.pci;
    // The VF driver reads its GUID now; a GUID set later needs another probe.
    vf.effective_guid = vf.port_guid;
    vf.effective_node = vf.node_guid;
    guid = vf.effective_guid;
    if (!fails) {
      vf.bound = true;
      lay_out_vf_rdma(pf, vf);
      tree_.add_link(vf.dir + "/driver", "../../../bus/pci/drivers/mlx5_core");
      tree_.add_link("bus/pci/drivers/mlx5_core/" + vf.pci.str(), "../../../../" + vf.dir);
    }
    // The driver registers it as "ib%d" (ipoib_add_port), "eth%d" on Ethernet; udevd
    // names it while it handles the add (Kernel::udev_rules).
    name = infiniband(*pf.spec) ? "ib%d" : "eth%d";
  }
  logs_.probe(pci.str(), guid.str());
  if (fails) {
    logs_.kmsg(3, "mlx5_core: probe of " + pci.str() + " failed with error -5");
    return EIO;
  }
  bring_up_netdev(index, i, name, /*at_boot=*/false);
  if (pf.spec->faults.netdev_gone_vfs.contains(i)) {
    // Gone before udev handled it, and udev's add comes after, for the netdev as it was.
    int ifindex = 0;
    {
      std::lock_guard lock(mu_);
      if (i < pf.vfs.size() && !pf.vfs[i].netdev_gone) {
        pf.vfs[i].netdev_gone = true;
        ifindex = pf.vfs[i].ifindex;
      }
    }
    const auto was = ifindex != 0 ? describe_netdev(ifindex) : std::nullopt;
    if (was) {
      take_down_netdev(Owner{index, i});
      udev_.late_add(ifindex, *was, "mlx5_core");
    }
  }
  return 0;
}

void Kernel::let_go_of_netdev(Pf& pf, uint16_t i) {
  {
    // First: a netdev of its that comes back from another namespace meanwhile is not
    // taken back (take_back_locked) by a VF on its way out.
    std::lock_guard lock(mu_);
    if (i < pf.vfs.size()) {
      pf.vfs[i].leaving = true;
    }
  }
  // Here, or moved away before or while it is taken down (unregister_departed after:
  // a move the listener reads meanwhile is in departed_ then).
  take_down_netdev(Owner{pf.index, i});
  unregister_departed(Owner{pf.index, i});
}

int Kernel::write_ofed_guid(std::size_t index, uint16_t i, bool port, std::string_view value) {
  const auto guid = ofed_guid(value);
  if (!guid) {
    return EINVAL;
  }
  // Firmware that never answers: until SIGUSR1 (the driver recovers) or the end.
  if (!port && pfs_[index]->spec->faults.guid_write_hang_vfs.contains(i) &&
      !hang_until_released()) {
    return EIO;
  }
  std::lock_guard lock(mu_);
  Pf& pf = *pfs_[index];
  if (i >= pf.vfs.size()) {
    return ENODEV;
  }
  if (!port && pf.spec->faults.guid_write_fail_vfs.contains(i)) {
    return EIO;
  }
  (port ? pf.vfs[i].port_guid : pf.vfs[i].node_guid) = guid.value();
  return 0;
}

int Kernel::write_ofed_policy(std::size_t index, uint16_t i, std::string_view value) {
  value = chomp(value);
  if (value != "Down" && value != "Up" && value != "Follow") {
    return EINVAL;
  }
  std::lock_guard lock(mu_);
  Pf& pf = *pfs_[index];
  if (i >= pf.vfs.size()) {
    return ENODEV;
  }
  pf.vfs[i].policy = std::string(value);
  return 0;
}

}  // namespace vfready::fakehost
