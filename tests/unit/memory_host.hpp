// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "vfready/host/links.hpp"
#include "vfready/host/sriov_calls.hpp"
#include "vfready/host/sriov_reads.hpp"
#include "vfready/host/udev_wait.hpp"
#include "vfready/model/inventory.hpp"

// An SR-IOV host in memory, for the pipeline's unit tests: PFs with VFs, links with
// names, udev. It answers as the kernel does where the pipeline can tell (ERANGE,
// EBUSY, ENOENT on sriov_numvfs; a VF's GUID taken at its probe; EEXIST for a taken
// name), records every change it is asked for, and fails what a test tells it to.
namespace vfready::testing {

class MemoryHost final : public host::SriovReads,
                         public host::SriovCalls,
                         public host::LinksAtOnce,
                         public host::UdevWait {
 public:
  struct Vf {
    model::PciAddress pci = model::PciAddress::from_parts(0, 0, 0, 0);
    std::optional<std::string> driver;
    int ifindex = 0;      // its netdev here, 0 for none
    bool in_pod = false;  // its netdev moved to another namespace
    model::Guid configured{0};
    model::Guid effective{0};                               // what the driver read at the probe
    model::GuidPolicy policy = model::GuidPolicy::kFollow;  // sriov/<n>/policy
  };
  struct Pf {
    model::PfInfo info;   // what does not change: IDs, driver, RDMA device, ports
    bool ipoib = true;    // its netdev takes VF GUIDs over netlink
    bool vf_rdma = true;  // a bound VF has an RDMA device (mlx5_ib) that shows its GUID
    uint16_t numvfs = 0;
    bool autoprobe = true;
    std::vector<Vf> vfs;
  };

  // A ConnectX-7 InfiniBand PF with a netdev, 16 VFs possible; OFED's GUID files or not.
  Pf& add_pf(const std::string& pci, const std::string& netdev, bool ofed = true);
  Pf& pf(const std::string& pci);
  // The host as a pass reads it before its workers start.
  model::HostInfo host_info();

  // --- What a test does to the host.
  // Creates `count` VFs as the kernel would with autoprobe on, GUIDs as given (0: none).
  void create_vfs(const std::string& pf_pci, uint16_t count,
                  model::Guid guid_base = model::Guid{0});
  void move_to_pod(const std::string& pf_pci, uint16_t index);  // its netdev leaves
  void bind_to(const std::string& pf_pci, uint16_t index, const std::string& driver);
  // Calls named here fail with the errno: "autoprobe", "numvfs", "guid", "netlink-guid",
  // "probe", "unbind", "rename", "mtu", "altname". `after` calls of the name succeed first.
  // host::kStuck as the errno: the call does not return, and its PF is stuck from then
  // on (every later call for it answers kStuck, and reads see nothing of it); for a link
  // request ("rename", "mtu", "altname"), every PF and every later link request.
  void fail(const std::string& call, int err, int after = 0);
  // The call that keeps PF `pf_pci` (or host::kLinksKey: a link request) stuck returns
  // with `err`: it is no longer stuck,
  // calls failed with kStuck succeed from now on, and collect_returned() tells it once.
  void unstick(const std::string& pf_pci, int err = 0);
  std::vector<host::ReturnedCall> collect_returned();
  // Readable while collect_returned() has calls to tell (an eventfd, as
  // host::DeviceCalls::returns_fd() is readable).
  int returns_fd();
  // The MTU no link goes above (0: none), as an IPoIB netdev's is at most its broadcast
  // group's whatever it is given (ipoib_change_mtu(): min(mcast_mtu, admin_mtu)).
  uint32_t mtu_cap = 0;
  std::set<std::string> probe_fails;  // VF addresses whose probe fails (EIO, no driver)
  // PFs whose VFs' probes, or whose sriov_numvfs writes, throw std::runtime_error (as
  // a bug in a pass would).
  std::set<std::string> probes_throw;
  std::set<std::string> numvfs_throws;
  bool hold_probes = false;
  bool hold_guid_writes = false;    // started OFED GUID writes, as probes
  bool hold_unbinds = false;        // started unbinds, as probes
  bool hold_link_requests = false;  // started link requests (Links::start), as probes
  std::size_t port_reads = 0;       // start_read_port()s that read a port's state
  int port_read_err = 0;            // what they answer instead of the state, if not 0
  // Called at each of them with the PF's address, once port_reads counts it (on the
  // caller's thread).
  std::function<void(const model::PciAddress&)> on_port_read;
  bool hold_guid_reads = false;         // started GUID read-backs, as probes
  bool hold_probe_reads = false;        // started reads of what a probe did, as probes
  bool hold_numvfs = false;             // started sriov_numvfs writes, as probes
  std::vector<std::size_t> guid_reads;  // the VFs of each started GUID read-back so far
  // What a read of a VF's RDMA device answers, by "<PF address>/<VF index>": none (no
  // RDMA device) for a VF not in it. Each VF asked is recorded in rdma_reads.
  std::map<std::string, host::VfRdmaRead> vf_rdma;
  std::vector<host::VfNetdev> rdma_reads;
  // Probes of PF `pf_pci`'s VFs are held too (as hold_probes), until stop_holding().
  void hold_probes_of(const std::string& pf_pci);
  // No probe of hold_probes_of()'s PFs is held from now on; every one held answers.
  void stop_holding();
  [[nodiscard]] std::size_t held_probes();
  std::chrono::milliseconds held_bound{60000};
  // The oldest held probe answers; false when none is held.
  bool release_probe();
  // The kernel log's lines, as a failed probe adds them.
  std::vector<std::string> kernel_log;
  bool udev_initializes = true;  // new netdevs are initialized by udev at once
  // Every change asked for, in order ("numvfs 0000:18:00.0 8", "probe 0000:18:00.1").
  std::vector<std::string> calls();
  std::vector<std::string> calls_named(const std::string& name);

  // --- host::SriovReads
  // The PF as it is now, its VFs too unless `with_vfs` is false; nullopt when there is
  // no such PF.
  std::optional<model::PfInfo> read_pf(const model::PciAddress& pf, bool with_vfs);
  model::VfInfo read_vf(const model::PciAddress& pf, uint16_t index);
  std::optional<model::PciAddress> vf_address(const model::PciAddress& pf, uint16_t index) override;
  bool has_ofed_sriov(const model::PciAddress& pf) override;
  host::VfBinding vf_binding(const model::PciAddress& pf, uint16_t index) override;
  std::optional<model::Guid> vf_port_guid(const model::PciAddress& pf, uint16_t index,
                                          bool ofed) override;
  std::optional<std::string> netdev_of(const model::PciAddress& function) override;
  host::NetdevDevice device_of_netdev(const std::string& netdev) override;
  std::optional<uint32_t> netdev_mtu(const std::string& name) override;
  std::vector<std::string> kernel_log_naming(const std::string& device) override;
  // --- host::SriovCalls
  int set_autoprobe(const model::PciAddress& pf, bool on) override;
  int set_num_vfs(const model::PciAddress& pf, uint16_t count);
  std::optional<host::OfedGuidError> set_vf_guid_ofed(const model::PciAddress& pf, uint16_t index,
                                                      model::Guid guid, model::GuidPolicy policy);
  // set_vf_guid_ofed for each VF in order: one error slot a VF.
  host::OfedGuidErrors set_vf_guids_ofed(const model::PciAddress& pf,
                                         std::span<const std::pair<uint16_t, model::Guid>> vfs,
                                         model::GuidPolicy policy);
  // The probe (drivers_probe): 0 whether or not a driver took the VF.
  int probe_vf(const model::PciAddress& pf, const model::PciAddress& vf);
  host::ProbedVf read_probed_vf(const model::PciAddress& pf, const model::PciAddress& vf,
                                uint16_t index, bool ofed);
  // With hold_probes, a started probe is under way until release_probe() (its fd turns
  // readable) or until `held_bound` passes; the probe is made when it is finished.
  std::unique_ptr<host::StartedCall<int>> start_probe_vf(const model::PciAddress& pf,
                                                         const model::PciAddress& vf) override;
  // With hold_numvfs, held as probes are (written when it is finished).
  std::unique_ptr<host::StartedCall<int>> start_set_num_vfs(const model::PciAddress& pf,
                                                            uint16_t count) override;
  // With hold_probe_reads, held as probes are (read when it is finished).
  std::unique_ptr<host::StartedProbe> start_read_probed_vf(const model::PciAddress& pf,
                                                           const model::PciAddress& vf,
                                                           uint16_t index, bool ofed) override;
  int unbind_vf(const model::PciAddress& pf, const model::PciAddress& vf,
                const std::string& driver);
  // With hold_guid_writes or hold_unbinds, these started calls are held as probes are
  // (release_probe() lets the oldest held call of any kind answer).
  std::unique_ptr<host::StartedCall<host::OfedGuidErrors>> start_set_vf_guids_ofed(
      const model::PciAddress& pf, std::span<const std::pair<uint16_t, model::Guid>> vfs,
      model::GuidPolicy policy) override;
  std::unique_ptr<host::StartedCall<int>> start_unbind_vf(const model::PciAddress& pf,
                                                          const model::PciAddress& vf,
                                                          const std::string& driver) override;
  // With hold_guid_reads, held as probes are (past held_bound its PF is stuck, as after a
  // device call past its deadline); each recorded in guid_reads.
  std::unique_ptr<host::StartedCall<host::ReadGuids>> start_read_vf_guids(
      const model::PciAddress& pf, std::span<const uint16_t> indices, bool ofed) override;
  // Answered at once from vf_rdma: kStuck while the PF is stuck.
  std::unique_ptr<host::StartedCall<host::VfRdmaReads>> start_read_vf_rdma(
      const model::PciAddress& pf, std::span<const host::VfNetdev> vfs) override;
  // Answered at once: kStuck while the PF is stuck. Each read of a port's state counted
  // in port_reads.
  std::unique_ptr<host::StartedCall<host::PortRead>> start_read_port(
      const model::PciAddress& pf) override;
  std::optional<host::StuckCall> stuck(const model::PciAddress& pf) override;

  // --- host::LinksAtOnce
  std::unique_ptr<host::StartedCall<host::LinkAnswer>> start(
      const host::LinkRequest& request) override;
  std::optional<host::Link> get(int ifindex) override;
  std::optional<host::Link> by_name(const std::string& name) override;
  int rename(int ifindex, const std::string& name) override;
  int set_mtu(int ifindex, uint32_t mtu) override;
  int rename_and_set_mtu(int ifindex, const std::string& name, uint32_t mtu) override;
  int add_altname(int ifindex, const std::string& name) override;
  int del_altname(int ifindex, const std::string& name) override;
  int set_vf_guids(int pf_ifindex, uint32_t vf, model::Guid node, model::Guid port) override;

  // The host's link events from now on (as RTNLGRP_LINK: a netdev made, renamed, its MTU
  // set, gone), until the object goes; one at a time.
  std::unique_ptr<host::LinkEvents> open_link_events();
  // An event to the open link events, if any: with the link's name, MTU and altnames as
  // they are now (the kernel's for a change of a link that is up: its altnames are added
  // and deleted without one, as on a link that is down), or `event` as given (one read
  // late, from before a change).
  void announce_link(int ifindex);
  void announce(host::LinkEvent event);

  // --- host::UdevWait: an uninitialized netdev stays so (a wait lasts its bound).
  bool initialized_now(int ifindex, Netdev netdev, bool ask) override;

 private:
  struct Failure {
    int err = 0;
    int after = 0;
  };
  // 0, or the errno a test set for this call; records it as asked.
  int call(const std::string& name, const std::string& what);
  // call() for a call into PF `pf`'s driver: kStuck once it is stuck.
  int call_on(const model::PciAddress& pf, const std::string& name, const std::string& what);
  // call() under `key` (a PF's address, or host::kLinksKey for a link request): kStuck
  // once that is stuck.
  int call_under(const std::string& key, const std::string& name, const std::string& what);
  Pf* find_pf(const model::PciAddress& pci);
  Vf* find_vf(const model::PciAddress& pci, Pf** owner = nullptr);
  class LinkFeed;
  int add_link(const std::string& name);
  void drop_link(int ifindex);
  int probe(Pf& pf, Vf& vf, uint16_t index);
  std::optional<host::Link> link_named(const std::string& name) const;

  std::recursive_mutex mu_;  // a pass's planner reads the host on a thread of its own
  std::map<std::string, Pf> pfs_;
  std::map<int, host::Link> links_;
  std::set<int> initialized_;
  std::map<std::string, Failure> failures_;
  std::map<std::string, host::StuckCall> stuck_;  // PF -> the call that did not return
  std::vector<host::ReturnedCall> returned_;
  // returns_fd(): made at the first ask, closed with the host.
  std::shared_ptr<int> returns_;
  std::vector<int> held_;           // eventfds of the held probes not released yet, oldest first
  std::set<std::string> held_pfs_;  // hold_probes_of()
  // A started call held until release_probe() or held_bound: `make` makes it then;
  // `stuck` is its answer when its bound passed first.
  template <class T>
  std::unique_ptr<host::StartedCall<T>> held_call(std::function<T()> make, T stuck);
  template <class T>
  std::unique_ptr<host::StartedCall<T>> held_call(std::function<T()> make,
                                                  std::function<T()> stuck);
  std::vector<std::string> calls_;
  int next_ifindex_ = 10;
  int link_fd_ = -1;  // eventfd of the open link events
  std::vector<host::LinkEvent> link_events_;
};

}  // namespace vfready::testing
