// SPDX-License-Identifier: Apache-2.0
// The shape of the fake sysfs: where each PCI function, driver, module, netdev and
// InfiniBand device lives and how the symlinks between them resolve (relative, as in
// the real /sys).
#include <algorithm>
#include <cctype>
#include <set>

#include "kernel.hpp"

namespace vfready::fakehost {

namespace {

std::string hex4(unsigned value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(4, '0');
  for (int i = 3; i >= 0; --i) {
    out[static_cast<std::size_t>(i)] = kDigits[value & 0xf];
    value >>= 4;
  }
  return out;
}

// "0x101e" -> "101e", as sriov_vf_device prints it.
std::string bare_hex(const std::string& id) { return id.substr(2); }

std::string upper(std::string s) {
  for (auto& c : s) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return s;
}

// The uevent lines of a PCI function that do not change ("0x15b3", "0x1021").
std::string pci_uevent(const model::PciAddress& pci, const std::string& vendor,
                       const std::string& device) {
  return "PCI_ID=" + upper(bare_hex(vendor)) + ":" + upper(bare_hex(device)) +
         "\nPCI_SLOT_NAME=" + pci.str() + "\n";
}

// From a directory to the root of the tree, as a relative link's prefix.
std::string up_to_root(const std::string& dir) {
  std::string out;
  for (std::size_t n = std::count(dir.begin(), dir.end(), '/') + 1; n > 0; --n) {
    out += "../";
  }
  return out;
}

// Every function of one root bus sits in one directory, the PF's parent; VFs go
// beside their PF there, whatever bus their routing ID falls on.
std::string bus_dir(const model::PciAddress& pf) {
  return "devices/pci" + pf.str().substr(0, pf.str().rfind(':'));
}

constexpr const char* kIbClass = "0x020700";  // InfiniBand controller

}  // namespace

std::string Kernel::vf_dir(const Pf& pf, const model::PciAddress& vf) {
  return bus_dir(pf.spec->pci) + "/" + vf.str();
}

std::string Kernel::vf_field(Pf& pf, uint16_t vf,
                             const std::function<std::string(const Vf&)>& get) {
  std::lock_guard lock(mu_);
  // A read that raced with the VF's removal sees nothing, as a read of a removed
  // sysfs file gets ENODEV.
  return vf < pf.vfs.size() ? get(pf.vfs[vf]) + "\n" : std::string();
}

void Kernel::add_writable(const std::string& path, std::function<int(std::string_view)> write,
                          std::function<std::string()> read, unsigned mode,
                          std::function<int()> read_error) {
  tree_.add_file(path,
                 Attribute{std::move(read),
                           [this, rel = "sys/" + path, w = std::move(write)](std::string_view v) {
                             const int err = w(v);
                             logs_.write(rel, v, err);
                             return err;
                           },
                           std::move(read_error)},
                 mode);
}

// port_show() in OFED's sriov_sysfs.c reads the GUID through mlx5_core_query_gids(), a
// firmware command, and returns its error: a command that never completes blocks the
// read (until SIGUSR1, the firmware answering, or the end: EIO), one that fails fails it.
int Kernel::port_read_error(const Pf& pf, uint16_t vf) {
  const auto& faults = pf.spec->faults;
  if (faults.port_read_hang_vfs.contains(vf) && !hang_until_released()) {
    return EIO;
  }
  return faults.port_read_fail_vfs.contains(vf) ? EIO : 0;
}

// state_show() and phys_state_show() (drivers/infiniband/core/sysfs.c) ask the driver
// (ib_query_port()) at each read and return its error: the topology's port faults act here.
void Kernel::add_port_state(const Pf& pf, const std::string& path, const std::string& value) {
  const auto& faults = pf.spec->faults;
  if (!faults.port_state_hangs && faults.port_state_errno == 0) {
    tree_.add_value(path, value);
    return;
  }
  tree_.add_file(path,
                 Attribute{[value] { return value + "\n"; },
                           {},
                           [this, &faults] {
                             if (faults.port_state_hangs && !hang_until_released()) {
                               return EIO;
                             }
                             return faults.port_state_errno;
                           }},
                 0444);
}

void Kernel::lay_out_modules(bool late) {
  for (const auto& [name, version] : topology_.modules) {
    if (topology_.late_modules.contains(name) != late) {
      continue;
    }
    tree_.add_value("module/" + name + "/initstate", "live");
    if (version) {
      tree_.add_value("module/" + name + "/version", *version);
    }
  }
}

void Kernel::lay_out_drivers_and_modules() {
  lay_out_modules(/*late=*/false);
  add_writable(
      "bus/pci/drivers_probe",
      [this](std::string_view v) { return write_bind(v, true, "mlx5_core"); }, {}, 0200);
  tree_.add_value("bus/pci/drivers_autoprobe", "1", 0644);
  // vfio-pci: what takes a VF for a VM or a DPDK pod (through driver_override).
  std::set<std::string> drivers = {"mlx5_core", "vfio-pci"};
  for (const auto& f : topology_.functions) {
    if (f.driver) {
      drivers.insert(*f.driver);
    }
  }
  for (const auto& d : drivers) {
    const auto dir = "bus/pci/drivers/" + d;
    add_writable(
        dir + "/bind", [this, d](std::string_view v) { return write_bind(v, false, d); }, {}, 0200);
    add_writable(
        dir + "/unbind", [this, d](std::string_view v) { return write_unbind(v, d); }, {}, 0200);
    if (topology_.modules.contains(d)) {
      tree_.add_link(dir + "/module", "../../../../module/" + d);
    }
  }
}

void Kernel::lay_out_pf(Pf& pf) {
  const auto& f = *pf.spec;
  pf.dir = bus_dir(f.pci) + "/" + f.pci.str();
  tree_.add_value(pf.dir + "/vendor", f.vendor);
  tree_.add_value(pf.dir + "/device", f.device);
  tree_.add_value(pf.dir + "/class", f.infiniband ? kIbClass : "0x020000");
  tree_.add_value(pf.dir + "/numa_node", std::to_string(f.numa_node));
  tree_.add_link(pf.dir + "/subsystem", "../../../bus/pci");
  tree_.add_value(pf.dir + "/uevent", (f.driver ? "DRIVER=" + *f.driver + "\n" : std::string()) +
                                          pci_uevent(f.pci, f.vendor, f.device));
  tree_.add_link("bus/pci/devices/" + f.pci.str(), "../../../" + pf.dir);
  if (f.driver) {
    tree_.add_link(pf.dir + "/driver", "../../../bus/pci/drivers/" + *f.driver);
    tree_.add_link("bus/pci/drivers/" + *f.driver + "/" + f.pci.str(), "../../../../" + pf.dir);
  }
  if (f.sriov) {
    tree_.add_value(pf.dir + "/sriov_totalvfs", std::to_string(f.sriov->totalvfs));
    tree_.add_value(pf.dir + "/sriov_vf_device", bare_hex(f.sriov->vf_device));
    tree_.add_value(pf.dir + "/sriov_offset", std::to_string(f.sriov->first_vf_offset));
    tree_.add_value(pf.dir + "/sriov_stride", std::to_string(f.sriov->vf_stride));
    add_writable(
        pf.dir + "/sriov_numvfs", [this, &pf](std::string_view v) { return write_numvfs(pf, v); },
        [this, &pf] { return read_numvfs(pf); }, 0664);
    add_writable(
        pf.dir + "/sriov_drivers_autoprobe",
        [this, &pf](std::string_view v) { return write_autoprobe(pf, v); },
        [this, &pf] {
          std::lock_guard lock(mu_);
          return std::string(pf.autoprobe ? "1\n" : "0\n");
        },
        0664);
  }
  if (f.infiniband) {
    const auto& ib = *f.infiniband;
    const auto ib_dir = pf.dir + "/infiniband/" + ib.name;
    tree_.add_value(ib_dir + "/fw_ver", ib.fw_ver);
    tree_.add_value(ib_dir + "/node_guid", ib.node_guid.sysfs_str());
    tree_.add_value(ib_dir + "/node_type", "1: CA");
    tree_.add_link(ib_dir + "/device", "../../../" + f.pci.str());
    tree_.add_link("class/infiniband/" + ib.name, "../../" + ib_dir);
    for (std::size_t p = 0; p < ib.ports.size(); ++p) {
      const auto& port = ib.ports[p];
      const auto port_dir = ib_dir + "/ports/" + std::to_string(p + 1);
      tree_.add_value(port_dir + "/link_layer", port.link_layer);
      add_port_state(pf, port_dir + "/state", port.state);
      add_port_state(pf, port_dir + "/phys_state", port.phys_state);
      tree_.add_value(port_dir + "/lid", "0x" + hex4(port.lid));
      // GID 0 is the link-local prefix and the port GUID (node GUID + port number - 1).
      const model::Guid port_guid{ib.node_guid.value() + p};
      tree_.add_value(port_dir + "/gids/0", "fe80:0000:0000:0000:" + port_guid.sysfs_str());
    }
  }
}

void Kernel::lay_out_vf(Pf& pf, const Vf& vf) {
  const auto& f = *pf.spec;
  const auto& dir = vf.dir;
  tree_.add_value(dir + "/vendor", f.vendor);
  tree_.add_value(dir + "/device", "0x" + bare_hex(f.sriov->vf_device));
  tree_.add_value(dir + "/class", f.infiniband ? kIbClass : "0x020000");
  tree_.add_value(dir + "/numa_node", std::to_string(f.numa_node));
  tree_.add_link(dir + "/subsystem", "../../../bus/pci");
  const auto vf_id = "0x" + bare_hex(f.sriov->vf_device);
  tree_.add_file(dir + "/uevent",
                 Attribute{[this, &pf, i = vf.index, tail = pci_uevent(vf.pci, f.vendor, vf_id)] {
                             std::lock_guard lock(mu_);
                             if (i >= pf.vfs.size()) {
                               return std::string();
                             }
                             const auto& v = pf.vfs[i];
                             const std::string driver = v.bound ? "mlx5_core" : v.held_by;
                             return (driver.empty() ? std::string() : "DRIVER=" + driver + "\n") +
                                    tail;
                           },
                           {}});
  tree_.add_link(dir + "/physfn", "../" + f.pci.str());
  {
    const std::size_t pf_index = pf.index;
    const uint16_t i = vf.index;
    add_writable(
        dir + "/driver_override",
        [this, pf_index, i](std::string_view v) {
          std::lock_guard lock(mu_);
          auto& vfs = pfs_[pf_index]->vfs;
          if (i >= vfs.size()) {
            return ENODEV;
          }
          std::string name(v);
          while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) {
            name.pop_back();
          }
          vfs[i].driver_override = name;
          return 0;
        },
        [this, &pf, i] {
          return vf_field(pf, i, [](const Vf& v) {
            return v.driver_override.empty() ? std::string("(null)") : v.driver_override;
          });
        },
        0644);
  }
  tree_.add_link(pf.dir + "/virtfn" + std::to_string(vf.index), "../" + vf.pci.str());
  tree_.add_link("bus/pci/devices/" + vf.pci.str(), "../../../" + dir);
  if (f.infiniband && f.infiniband->ofed_sriov_sysfs) {
    const std::size_t pf_index = pf.index;
    const auto sriov_dir = pf.dir + "/sriov/" + std::to_string(vf.index);
    const uint16_t i = vf.index;
    add_writable(
        sriov_dir + "/node",
        [this, pf_index, i](std::string_view v) { return write_ofed_guid(pf_index, i, false, v); },
        [this, &pf, i] { return vf_field(pf, i, [](const Vf& v) { return v.node_guid.str(); }); });
    add_writable(
        sriov_dir + "/port",
        [this, pf_index, i](std::string_view v) { return write_ofed_guid(pf_index, i, true, v); },
        [this, &pf, i] {
          return vf_field(pf, i, [](const Vf& v) { return v.effective_guid.str(); });
        },
        0644, [this, &pf, i] { return port_read_error(pf, i); });
    add_writable(
        sriov_dir + "/policy",
        [this, pf_index, i](std::string_view v) { return write_ofed_policy(pf_index, i, v); },
        [this, &pf, i] { return vf_field(pf, i, [](const Vf& v) { return v.policy; }); });
  }
}

namespace {

// mlx5_<n> as the driver names RDMA devices, numbered apart from the PFs'.
std::string vf_rdma_name(std::size_t pf_index, uint16_t vf_index) {
  return "mlx5_" + std::to_string(100 + pf_index * 1000 + vf_index);
}

}  // namespace

void Kernel::lay_out_vf_rdma(const Pf& pf, const Vf& vf) {
  if (!pf.spec->infiniband) {
    return;
  }
  const auto name = vf_rdma_name(pf.index, vf.index);
  const auto dir = vf.dir + "/infiniband/" + name;
  tree_.add_value(dir + "/node_guid", vf.effective_node.sysfs_str());
  tree_.add_value(dir + "/node_type", "1: CA");
  tree_.add_value(dir + "/ports/1/gids/0", "fe80:0000:0000:0000:" + vf.effective_guid.sysfs_str());
  tree_.add_value(dir + "/ports/1/link_layer", "InfiniBand");
  tree_.add_link(dir + "/device", "../../../" + vf.pci.str());
  tree_.add_link("class/infiniband/" + name, "../../" + dir);
}

void Kernel::remove_vf_rdma(const Vf& vf) {
  for (const auto& name : tree_.list(vf.dir + "/infiniband")) {
    tree_.remove("class/infiniband/" + name);
  }
  tree_.remove(vf.dir + "/infiniband");
}

void Kernel::remove_vf_layout(Pf& pf, const Vf& vf) {
  remove_vf_rdma(vf);
  if (!vf.held_by.empty()) {
    tree_.remove("bus/pci/drivers/" + vf.held_by + "/" + vf.pci.str());
  }
  tree_.remove(vf.dir);
  tree_.remove(pf.dir + "/virtfn" + std::to_string(vf.index));
  tree_.remove(pf.dir + "/sriov/" + std::to_string(vf.index));
  tree_.remove("bus/pci/devices/" + vf.pci.str());
  tree_.remove("bus/pci/drivers/mlx5_core/" + vf.pci.str());
}

void Kernel::add_net_entries(const std::string& dev_dir, const std::string& ifname, int ifindex,
                             bool infiniband) {
  const auto dir = dev_dir + "/net/" + ifname;
  tree_.add_value(dir + "/ifindex", std::to_string(ifindex));
  // ARPHRD_INFINIBAND for IPoIB netdevs, ARPHRD_ETHER otherwise.
  tree_.add_value(dir + "/type", infiniband ? "32" : "1");
  tree_.add_file(dir + "/address",
                 Attribute{[this, ifindex] { return read_link(ifindex, "address"); }, {}});
  tree_.add_file(dir + "/mtu",
                 Attribute{[this, ifindex] { return read_link(ifindex, "mtu"); }, {}});
  tree_.add_link(dir + "/device", "../../../" + dev_dir.substr(dev_dir.rfind('/') + 1));
  // What libudev reads of a netdev: its properties, and its subsystem's name.
  tree_.add_file(dir + "/uevent",
                 Attribute{[this, ifindex] { return read_link(ifindex, "uevent"); }, {}});
  tree_.add_link(dir + "/subsystem", up_to_root(dir) + "class/net");
  tree_.add_link("class/net/" + ifname, "../../" + dir);
}

void Kernel::remove_net_entries(const std::string& dev_dir, const std::string& ifname) {
  // A function has one netdev here; the kernel removes the net/ glue directory with the
  // last one, so a VF unbound or handed to vfio-pci has no net/ at all.
  tree_.remove(dev_dir + "/net");
  tree_.remove("class/net/" + ifname);
}

}  // namespace vfready::fakehost
