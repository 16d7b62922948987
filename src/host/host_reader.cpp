// SPDX-License-Identifier: Apache-2.0
#include "vfready/host/host_reader.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <exception>
#include <fstream>
#include <iterator>
#include <mutex>
#include <span>
#include <thread>

#include "attribute_reads.hpp"
#include "pf_reads.hpp"
#include "rdma_devices.hpp"
#include "vfready/host/errno_name.hpp"
#include "vfready/model/module_alias.hpp"

namespace vfready::host {

namespace {

// Threads reading PCI functions at once, the caller's among them. Each read waits on a
// FUSE or sysfs round trip more than on a CPU: three bring READY as soon as sixteen did
// (docs/performance.md), with fewer threads.
constexpr std::size_t kReaders = 3;

// The first netdev under a device's net/ and its ifindex.
void read_netdev(Sysfs& sysfs, const std::string& dir, std::optional<std::string>* name,
                 int* ifindex) {
  const auto names = sysfs.list(dir + "net");
  if (names.empty()) {
    return;
  }
  *name = names.front();
  *ifindex = number<int>(sysfs, dir + "net/" + names.front() + "/ifindex").value_or(0);
}

}  // namespace

model::VfInfo read_vf_binding(Sysfs& sysfs, const std::string& pf_dir, uint16_t index) {
  model::VfInfo vf;
  vf.index = index;
  const auto dir = pf_dir + "virtfn" + std::to_string(index) + "/";
  read_netdev(sysfs, dir, &vf.netdev, &vf.ifindex);  // a netdev comes from a bound driver
  if (!vf.netdev) {
    vf.driver = sysfs.link_target_name(dir + "driver");
  }
  return vf;
}

std::optional<model::PciAddress> read_vf_address(Sysfs& sysfs, const std::string& pf_dir,
                                                 uint16_t index) {
  auto name = sysfs.link_target_name(pf_dir + "virtfn" + std::to_string(index));
  auto pci = name ? model::PciAddress::parse(*name) : Error{"no virtfn link"};
  return pci ? std::optional<model::PciAddress>(pci.value()) : std::nullopt;
}

std::string read_text(const std::vector<DeviceOpResult>& got, std::size_t i) {
  return i < got.size() && got[i].err == 0 ? got[i].text : std::string();
}

std::optional<model::Guid> parsed_guid(const DeviceOpResult& r) {
  if (r.err != 0) {
    return std::nullopt;
  }
  auto g = model::Guid::parse(r.text);
  return g ? std::optional<model::Guid>(g.value()) : std::nullopt;
}

namespace {

// The node and port GUIDs of VFs (OFED's sriov/<n>/{node,port}), read in one device
// call: OFED answers each from the firmware, which can hang.
void read_vf_guids(Sysfs& sysfs, const model::PciAddress& pci, const std::string& pf_dir,
                   std::span<model::VfInfo> vfs) {
  std::vector<DeviceOp> ops;
  for (const auto& vf : vfs) {
    const auto dir = pf_dir + "sriov/" + std::to_string(vf.index) + "/";
    ops.push_back({DeviceOp::Kind::kRead, dir + "node", {}});
    ops.push_back({DeviceOp::Kind::kRead, dir + "port", {}});
  }
  const auto got = sysfs.on_device(pci.str(), std::move(ops), {});
  for (std::size_t i = 0; i < vfs.size() && 2 * i + 1 < got.size(); ++i) {
    vfs[i].node_guid = parsed_guid(got[2 * i]);
    vfs[i].effective_guid = parsed_guid(got[2 * i + 1]);
  }
}

// The GUIDs of a VF's RDMA device (mlx5_ib makes one for a bound VF), where OFED's
// sriov/ is not there to tell: its node GUID, and port 1's GID 0, whose last 64 bits are
// the GUID the port uses. Nothing when the VF has none (unbound, another driver, no
// mlx5_ib).
void read_vf_rdma_guids(Sysfs& sysfs, const std::string& pf_dir, model::VfInfo& vf) {
  const auto devices = pf_dir + "virtfn" + std::to_string(vf.index) + "/infiniband";
  const auto names = sysfs.list(devices);
  if (names.empty()) {
    return;
  }
  const auto dir = devices + "/" + names.front() + "/";
  vf.node_guid = guid(sysfs, dir + "node_guid");
  constexpr std::size_t kGuidText = 19;  // "xxxx:xxxx:xxxx:xxxx"
  if (auto gid = text(sysfs, dir + "ports/1/gids/0"); gid && gid->size() >= kGuidText) {
    if (auto g = model::Guid::parse(std::string_view(*gid).substr(gid->size() - kGuidText))) {
      vf.effective_guid = g.value();
    }
  }
}

model::VfInfo read_vf_links(Sysfs& sysfs, const std::string& pf_dir, uint16_t index,
                            bool with_mac) {
  model::VfInfo vf;
  vf.index = index;
  const auto link = pf_dir + "virtfn" + std::to_string(index);
  vf.pci = read_vf_address(sysfs, pf_dir, index).value_or(vf.pci);
  vf.driver = sysfs.link_target_name(link + "/driver");
  read_netdev(sysfs, link + "/", &vf.netdev, &vf.ifindex);
  if (vf.netdev && with_mac) {
    vf.mac = mac(sysfs, link + "/net/" + *vf.netdev + "/address");
  }
  return vf;
}

// A function whose vendor was read: nullopt when it is a VF. One that `whole` (when
// given) says no config entry can select is read for every attribute a plan reads, but
// with no device call, which its driver or firmware could hold for the call's bound (up
// to minutes) while no PF of vfready's is read: its VFs are those its virtfn links
// name, its ports' state is not read, nor its VFs' GUIDs.
std::optional<model::PfInfo> read_function(Sysfs& sysfs, const model::PciAddress& pci,
                                           uint16_t vendor,
                                           const model::Selectable* whole = nullptr,
                                           bool port_states = true) {
  const auto dir = "bus/pci/devices/" + pci.str() + "/";
  if (sysfs.exists(dir + "physfn")) {
    return std::nullopt;
  }
  std::vector<uint16_t> linked;  // the VFs read: 0 to sriov_numvfs, or by their links
  model::PfInfo pf;
  pf.pci = pci;
  pf.vendor = vendor;
  const auto device = number<uint16_t>(sysfs, dir + "device", 16);
  pf.device = device.value_or(0);
  constexpr uint16_t kMellanox = 0x15b3;  // device selectors select its functions only
  const bool managed = whole == nullptr || whole->by_address(pci) ||
                       (device && vendor == kMellanox && whole->by_device(*device));
  pf.driver = sysfs.link_target_name(dir + "driver");
  pf.numa_node = number<int>(sysfs, dir + "numa_node").value_or(-1);
  read_netdev(sysfs, dir, &pf.netdev, &pf.ifindex);
  if (pf.netdev) {
    const auto net = dir + "net/" + *pf.netdev + "/";
    pf.netdev_type = number<int>(sysfs, net + "type").value_or(0);
    constexpr int kEther = 1;  // ARPHRD_ETHER: an InfiniBand address is no MAC
    if (pf.netdev_type == kEther && number<int>(sysfs, net + "addr_assign_type") == 0) {
      pf.permanent_mac = mac(sysfs, net + "address");
    }
  }
  if (auto total = number<uint16_t>(sysfs, dir + "sriov_totalvfs")) {
    pf.sriov = true;
    pf.totalvfs = *total;
    pf.vf_device = number<uint16_t>(sysfs, dir + "sriov_vf_device", 16).value_or(0);
    if (managed) {
      pf.numvfs = read_numvfs(sysfs, dir, pf);
      for (uint16_t i = 0; i < pf.numvfs; ++i) {
        linked.push_back(i);
      }
    } else {
      linked = virtfn_indexes(sysfs, dir);
      pf.numvfs = static_cast<uint16_t>(linked.size());
    }
    pf.first_vf_offset = number<uint16_t>(sysfs, dir + "sriov_offset").value_or(1);
    pf.vf_stride = number<uint16_t>(sysfs, dir + "sriov_stride").value_or(1);
    pf.autoprobe = text(sysfs, dir + "sriov_drivers_autoprobe").value_or("1") != "0";
  }
  if (const auto rdma = rdma_device_of(sysfs, dir, pf.netdev)) {
    const auto& ib_dir = rdma->dir;
    pf.ib_device = rdma->name;
    pf.rdma_over_netdev = rdma->over_netdev;
    if (auto fw = text(sysfs, ib_dir + "fw_ver")) {
      pf.firmware_text = *fw;
      if (auto v = model::Version::parse(*fw)) {
        pf.firmware = v.value();
      }
    }
    pf.node_guid = guid(sysfs, ib_dir + "node_guid");
    auto ports = sysfs.list(ib_dir + "ports");
    std::sort(ports.begin(), ports.end(), [](const std::string& a, const std::string& b) {
      return a.size() != b.size() ? a.size() < b.size() : a < b;
    });
    read_ports(sysfs, pci, ib_dir, ports, pf, managed && port_states);
  }
  pf.ofed_sriov = sysfs.exists(dir + "sriov/0/port");
  for (const uint16_t index : linked) {
    pf.vfs.push_back(read_vf_links(sysfs, dir, index, pf.netdev_type == 1));
  }
  if (managed && pf.ofed_sriov && !pf.vfs.empty()) {
    read_vf_guids(sysfs, pci, dir, pf.vfs);
  }
  for (auto& vf : pf.vfs) {
    if (managed && !pf.ofed_sriov) {
      read_vf_rdma_guids(sysfs, dir, vf);
    }
  }
  return pf;
}

}  // namespace

std::optional<model::Guid> read_vf_port_guid(Sysfs& sysfs, const model::PciAddress& pf,
                                             uint16_t index, bool ofed) {
  const auto dir = "bus/pci/devices/" + pf.str() + "/";
  if (ofed) {
    // Read without asking first whether it is there: ENOENT says so.
    const auto got = sysfs.on_device(
        pf.str(), {{DeviceOp::Kind::kRead, dir + "sriov/" + std::to_string(index) + "/port", {}}},
        {});
    if (got.back().err != ENOENT) {
      return parsed_guid(got.back());
    }
  }
  model::VfInfo vf;
  vf.index = index;
  read_vf_rdma_guids(sysfs, dir, vf);
  return vf.effective_guid;
}

std::vector<std::string> missing_modules(Sysfs& sysfs, const std::vector<std::string>& modules) {
  std::vector<std::string> missing;
  for (const auto& m : modules) {
    if (!sysfs.exists("module/" + m)) {
      missing.push_back(m);
    }
  }
  return missing;
}

namespace {

// Whether a function is a PF of interest: Mellanox's (every one, so that a check can say
// why one cannot be used), any vendor's with SR-IOV, or one a config names by address.
bool of_interest(Sysfs& sysfs, const std::string& name, const model::PciAddress& pci,
                 uint16_t vendor, const model::Selectable* whole) {
  constexpr uint16_t kMellanox = 0x15b3;
  return vendor == kMellanox || (whole != nullptr && whole->by_address(pci)) ||
         sysfs.exists("bus/pci/devices/" + name + "/sriov_totalvfs");
}

// Each SR-IOV PF's VF driver: mlx5_core's own VFs are its; any other's, the module
// modules.alias names for the VFs' IDs. The file (about a megabyte) is read once, and
// only when a PF of another driver needs it.
void find_vf_drivers(Sysfs& sysfs, const HostPaths& paths, model::HostInfo& host) {
  std::optional<std::string> aliases;
  for (auto& pf : host.functions) {
    if (!pf.sriov) {
      continue;
    }
    if (pf.mlx5()) {
      pf.vf_driver = "mlx5_core";
    } else {
      if (!aliases) {
        // A driver built into the kernel is in modules.builtin.alias (since 5.9).
        aliases.emplace();
        for (const char* file : {"/modules.alias", "/modules.builtin.alias"}) {
          std::ifstream in(paths.modules_dir + "/" + host.kernel_release + file);
          aliases->append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        }
      }
      pf.vf_driver = model::pci_module_for(*aliases, pf.vendor, pf.vf_device).value_or("");
    }
    pf.vf_driver_loaded = pci_driver_registered(sysfs, pf.vf_driver);
  }
}

}  // namespace

model::HostInfo read_host(Sysfs& sysfs, const HostPaths& paths, const model::Selectable* whole,
                          bool port_states, const std::function<void()>& read_one) {
  model::HostInfo host;
  std::ifstream(paths.proc_root + "/sys/kernel/osrelease") >> host.kernel_release;
  // Every loaded module by name; the versions of the RDMA stack's, which the
  // compatibility table judges.
  for (const auto& m : sysfs.list("module")) {
    const bool rdma = m.starts_with("mlx") || m.starts_with("ib_") || m.starts_with("rdma");
    host.modules[m] = rdma ? text(sysfs, "module/" + m + "/version") : std::nullopt;
  }
  host.kernel_log = read_kernel_log(paths.kernel_log);
  // Functions are read side by side: each read waits on the kernel (on a driver's show()),
  // and a PF with its VFs is some hundred of them.
  const auto names = sysfs.list("bus/pci/devices");
  std::vector<std::optional<model::PfInfo>> read(names.size());
  std::atomic<std::size_t> next{0};
  std::mutex failed_mu;
  std::exception_ptr failed;  // the first exception of a reader, thrown again here
  const auto work = [&] {
    try {
      for (std::size_t i = next++; i < names.size(); i = next++) {
        auto pci = model::PciAddress::parse(names[i]);
        const auto vendor = number<uint16_t>(sysfs, "bus/pci/devices/" + names[i] + "/vendor", 16);
        if (pci && vendor && of_interest(sysfs, names[i], pci.value(), *vendor, whole)) {
          read[i] = read_function(sysfs, pci.value(), *vendor, whole, port_states);
          if (read_one) {
            read_one();
          }
        }
      }
    } catch (...) {
      std::lock_guard lock(failed_mu);
      failed = failed ? failed : std::current_exception();
    }
  };
  // This thread reads too: kReaders - 1 more.
  std::vector<std::thread> workers(std::min<std::size_t>(kReaders, names.size() + 1) - 1);
  for (auto& w : workers) {
    w = std::thread(work);
  }
  work();
  for (auto& w : workers) {
    w.join();
  }
  if (failed) {
    std::rethrow_exception(failed);
  }
  for (auto& pf : read) {
    if (pf) {
      host.functions.push_back(std::move(*pf));
    }
  }
  std::sort(host.functions.begin(), host.functions.end(),
            [](const model::PfInfo& a, const model::PfInfo& b) { return a.pci < b.pci; });
  find_vf_drivers(sysfs, paths, host);
  return host;
}

}  // namespace vfready::host
