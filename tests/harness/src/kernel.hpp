// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "host_logs.hpp"
#include "netdevs.hpp"
#include "topology.hpp"
#include "tree.hpp"
#include "udev_sim.hpp"
#include "vfready/model/guid.hpp"

// The kernel the fake host plays: PCI functions with SR-IOV, the mlx5 driver binding
// them, their netdevs and InfiniBand devices, as sysfs shows them. Writes behave as
// drivers/pci/iov.c, the driver core and MLNX_OFED's sriov sysfs do; see docs/fake-host.md.
namespace vfready::fakehost {

// A sysfs write's value without its one trailing newline.
inline std::string_view chomp(std::string_view v) {
  if (!v.empty() && v.back() == '\n') {
    v.remove_suffix(1);
  }
  return v;
}

// Whether a function's netdevs are IPoIB (its first port's link layer is InfiniBand).
bool infiniband(const FunctionSpec& spec);

class Kernel {
 public:
  Kernel(const Topology& topology, Tree& tree, Netdevs& netdevs, UdevSim& udev, HostLogs& logs);

  // Lays out sysfs and brings up the PFs' netdevs, as after boot.
  void boot();
  // A link event from the namespace: keeps sysfs net/ entries in step with renames and
  // removals made by anyone.
  void on_link_event(const LinkEvent& heard);
  // Wakes every blocked write so that teardown can go on; they fail with EIO.
  void shutdown();
  // The driver recovers: writes of sriov_numvfs held by numvfs_write_hangs go on and
  // complete, and later ones do not hang. Modules still loading (late_modules) appear.
  void release_hangs();

 private:
  struct Vf {
    uint16_t index = 0;
    model::PciAddress pci;
    std::string dir;  // relative to sys/
    bool bound = false;
    int ifindex = 0;
    std::string ifname{};
    model::Guid node_guid{0};       // configured through OFED sysfs
    model::Guid port_guid{0};       // configured through OFED sysfs
    model::Guid effective_guid{0};  // what the VF's port took at its last probe
    model::Guid effective_node{0};  // the node GUID it took then
    std::string policy = "Down";
    std::string driver_override{};  // sysfs driver_override: the only driver that may bind it
    std::string held_by{};          // a driver other than mlx5_core bound to it
    bool netdev_gone = false;       // netdev_gone_vfs has taken its netdev once
    bool locked = false;            // its device lock is held: a bind, probe or unbind runs
    bool leaving = false;  // its driver is letting go (let_go_of_netdev): nothing taken back
  };

  struct Pf {
    std::size_t index = 0;  // its place in pfs_, set at boot
    const FunctionSpec* spec = nullptr;
    std::string dir;  // relative to sys/
    bool bound = false;
    bool leaving = false;  // its driver is being removed: nothing taken back
    bool autoprobe = true;
    int ifindex = 0;
    std::string ifname{};
    std::vector<Vf> vfs;  // as many as sriov_numvfs says
    std::mutex sriov_mu;  // the device lock sriov_numvfs takes (reads too)
  };

  // Where a netdev or a PCI address belongs: a PF, or a VF of it.
  struct Owner {
    std::size_t pf = 0;
    std::optional<uint16_t> vf;
  };

  // The netdev of a PF or VF, as references into the state (with mu_ held).
  struct NetRef {
    std::string& dir;
    int& ifindex;
    std::string& ifname;
  };
  NetRef net_of(const Owner& owner);
  // A netdev that left the namespace and is back (RTM_NEWLINK of a departed ifindex):
  // its function's sysfs net/ entries again. True when taken back; `orphan` when its
  // function let go of it meanwhile, so that it is to be removed (mu_ held).
  bool take_back_locked(const LinkEvent& event, bool* orphan);

  // A VF's device lock (Vf::locked), waited for under mu_ as the driver core's
  // device_lock() waits: false when the VF is gone meanwhile (a removal keeps each VF's
  // lock until all are gone).
  bool lock_vf(Pf& pf, uint16_t i);
  void unlock_vf(Pf& pf, uint16_t i);
  struct VfUnlock {  // unlocks at the end of its scope
    Kernel* kernel;
    Pf* pf;
    uint16_t i;
    VfUnlock(Kernel* k, Pf* p, uint16_t vf) : kernel(k), pf(p), i(vf) {}
    VfUnlock(const VfUnlock&) = delete;
    VfUnlock& operator=(const VfUnlock&) = delete;
    ~VfUnlock() { kernel->unlock_vf(*pf, i); }
  };

  // kernel_layout.cpp: the sysfs tree
  void lay_out_pf(Pf& pf);
  void lay_out_drivers_and_modules();
  void lay_out_modules(bool late);
  void lay_out_vf(Pf& pf, const Vf& vf);
  void remove_vf_layout(Pf& pf, const Vf& vf);
  // The RDMA device a bound VF has (mlx5_ib): its node GUID and port 1's GID 0, as the
  // VF took them at its probe. Made at bind, removed at unbind (with mu_ held).
  void lay_out_vf_rdma(const Pf& pf, const Vf& vf);
  void remove_vf_rdma(const Vf& vf);
  void add_net_entries(const std::string& dev_dir, const std::string& ifname, int ifindex,
                       bool infiniband);
  void remove_net_entries(const std::string& dev_dir, const std::string& ifname);
  std::string vf_dir(const Pf& pf, const model::PciAddress& vf);
  std::string vf_field(Pf& pf, uint16_t vf, const std::function<std::string(const Vf&)>& get);
  void add_writable(const std::string& path, std::function<int(std::string_view)> write,
                    std::function<std::string()> read = {}, unsigned mode = 0644,
                    std::function<int()> read_error = {});
  // OFED's port_show() asks the firmware for the VF's GID 0 at each read: the topology's
  // port_read faults act here (0: the read goes on).
  int port_read_error(const Pf& pf, uint16_t vf);

  // kernel.cpp: behaviour
  int write_numvfs(Pf& pf, std::string_view value);
  int write_autoprobe(Pf& pf, std::string_view value);
  int write_ofed_guid(std::size_t index, uint16_t i, bool port, std::string_view value);
  int write_ofed_policy(std::size_t index, uint16_t i, std::string_view value);
  // A write of `bind` of `driver`'s directory, or of drivers_probe (`probe_only`: the
  // driver is the VF's driver_override, else mlx5_core).
  int write_bind(std::string_view value, bool probe_only, const std::string& driver);
  int write_unbind(std::string_view value, const std::string& driver);
  // A VF taken by a driver other than mlx5_core (vfio-pci): no netdev, no RDMA device.
  int hold_vf(std::size_t index, uint16_t i, const std::string& driver);
  int hold_vf_locked(Pf& pf, uint16_t i, const std::string& driver);  // its lock held
  int release_vf(std::size_t index, uint16_t i, const std::string& driver);
  void enable_vfs(std::size_t index, uint16_t count);
  void disable_vfs(std::size_t index);
  int probe_vf(std::size_t index, uint16_t i);  // with the VF's device lock held
  void unbind_vf(std::size_t index, uint16_t i);
  // kernel_net.cpp: netdevs
  void bring_up_netdev(std::size_t index, std::optional<uint16_t> vf, const std::string& name,
                       bool at_boot);
  void take_down_netdev(const Owner& owner);
  // The netdevs of `owner` in other namespaces removed there, as its driver's remove
  // unregisters its netdev wherever it is (unregister_netdev(), net/core/dev.c).
  void unregister_departed(const Owner& owner);
  // VF `i` of `pf` marked leaving (no netdev of its is taken back from another namespace
  // from now on), then its netdev taken down: the start of its driver's remove.
  void let_go_of_netdev(Pf& pf, uint16_t i);
  // What udevd's rules make of the new netdev `ifindex` as it handles its add: the name
  // and altnames of the topology's udev.name_policy (udev_names.hpp); and udevd doing it.
  UdevNaming udev_rules(int ifindex);
  void udev_apply(int ifindex, const UdevNaming& naming);
  std::string read_numvfs(Pf& pf);
  std::string read_link(int ifindex, const std::string& field);
  // A netdev's sysfs path and name for udev's messages.
  std::optional<UdevSim::Netdev> describe_netdev(int ifindex);
  std::optional<Owner> owner_of_pci(std::string_view text);
  // Waits `ms` unless shutdown() comes first; false then.
  bool pause_ms(uint32_t ms);
  // Blocks as a hung driver call does: until release_hangs() (true) or stop (false).
  bool hang_until_released();
  // A port's state or phys_state file of `pf`, which its port faults make fail or block.
  void add_port_state(const Pf& pf, const std::string& path, const std::string& value);

  const Topology& topology_;
  Tree& tree_;
  Netdevs& netdevs_;
  UdevSim& udev_;
  HostLogs& logs_;

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  bool released_ = false;  // release_hangs() was called

  // pci_lock_rescan_remove(): held around sriov_configure where the topology's kernel
  // takes it.
  std::mutex rescan_mu_;
  // Held while one link event is followed, from the look at its name to udev's move: a
  // name checked against the kernel is applied before another event can change it (the
  // listener's event, read late, must not undo the rename udev's rules made meanwhile).
  // Taken before mu_.
  std::mutex link_mu_;
  std::mutex mu_;  // guards the state below
  std::vector<std::unique_ptr<Pf>> pfs_;
  std::map<int, Owner> netdev_owners_;
  // A netdev that left the namespace (moved to a pod's): whose it is, and where it went.
  struct Departed {
    Owner owner;
    int here = 0;      // its ifindex here, before it left
    int netnsid = -1;  // the namespace it went to, as this one knows it (-1: not said)
    int ifindex = 0;   // its ifindex there
    std::string address;
  };
  // Netdevs that left the namespace, by their ifindex here: one that comes back is its
  // function's again, as the kernel's device link never went away.
  std::map<int, Departed> departed_;
  // Netdevs whose function let go of them as they were leaving the namespace (their
  // RTM_DELLINK not yet followed), by ifindex: removed where they went once it is.
  std::set<int> unregister_on_departure_;
  std::condition_variable departed_cv_;  // with mu_: one of those was removed
  std::condition_variable vf_lock_cv_;   // with mu_: a VF's device lock was let go
  std::map<int, LinkEvent> links_;       // by ifindex: what the kernel last said of each
  // Netdevs renamed since the driver named them (name_assign_type NET_NAME_RENAMED), by
  // ifindex: udev's NamePolicy=keep leaves their name.
  std::set<int> renamed_;
  std::map<model::PciAddress, Owner> functions_;
};

}  // namespace vfready::fakehost
