// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vfready/host/started_call.hpp"
#include "vfready/model/config.hpp"
#include "vfready/model/guid.hpp"
#include "vfready/model/mac.hpp"

// Network links of the namespace the daemon runs in, over rtnetlink: names,
// alternative names, MTU, and VF GUIDs on an IPoIB PF. Every call returns 0 or the
// errno the kernel answered (EEXIST for a taken name, EOPNOTSUPP for a VF GUID on a
// netdev that is not IPoIB).
namespace vfready::host {

// One VF as its PF's driver reports it (IFLA_VF_INFO of the PF's IFLA_VFINFO_LIST, filled
// by rtnl_fill_vfinfo() from the driver's ndo_get_vf_config()): what was set through the
// PF, not what the VF's own driver took. A setting the driver does not report (-1) is
// nullopt.
struct VfPort {
  uint32_t vf = 0;
  std::optional<model::Mac> mac{};  // IFLA_VF_MAC: its first 6 bytes
  uint32_t vlan = 0;                // IFLA_VF_VLAN: 0, none
  uint32_t qos = 0;
  std::optional<bool> spoofchk{};
  std::optional<bool> trust{};
  std::optional<model::VfLinkState> link_state{};
};

struct Link {
  int ifindex = 0;
  std::string name;
  std::vector<std::string> altnames;
  uint32_t mtu = 0;
  bool up = false;                  // IFF_UP: administratively up
  std::optional<model::Mac> mac{};  // IFLA_ADDRESS, where it is a 6-byte one
  std::vector<VfPort> vfs{};        // asked for (LinkRequest::vfs) and a PF with VFs only
};

// A request about one link, as a pass makes them.
struct LinkRequest {
  enum class Kind : uint8_t {
    kGet,         // the link `ifindex`
    kByName,      // the link whose name or altname `name` is
    kSet,         // `ifindex` renamed to `name` (unless empty), its MTU set to `mtu` (if any)
    kAddAltname,  // altname `name` added to `ifindex`
    kDelAltname,  // altname `name` taken from `ifindex`
    kSetVfGuids,  // VF `vf` of the IPoIB PF `ifindex` given `node_guid` and `port_guid`
    kSetUp,       // `ifindex` set administratively up (IFF_UP)
    kSetVfPort,   // VF `vf` of the Ethernet PF `ifindex` given `mac` and what `vf_port` sets
  };
  Kind kind = Kind::kGet;
  int ifindex = 0;
  std::string name{};
  std::optional<uint32_t> mtu{};
  uint32_t vf = 0;
  model::Guid node_guid{0};
  model::Guid port_guid{0};
  std::optional<model::Mac> mac{};
  model::VfPortConfig vf_port{};
  bool vfs = false;  // kGet: with its VFs as its driver reports them (RTEXT_FILTER_VF)
};

// Its answer: 0, the errno the kernel answered, or kStuck (no answer within its
// deadline); for kGet and kByName, the link (ENODEV: there is none).
struct LinkAnswer {
  int err = 0;
  std::optional<Link> link{};
};

// The key a host's helpers make link requests under (DeviceCalls): rtnl_lock, which the
// kernel serves every link request under, is one lock for every link, so a request stuck
// there keeps every PF stuck.
inline constexpr const char* kLinksKey = "rtnl_lock";

// What a request does, in words ("rename of ifindex 7 to ib0v3"), for logs and stuck calls.
std::string describe(const LinkRequest& request);

// What a pass changes and reads links through: each request started (a host whose
// requests may wait on rtnl_lock makes them where they wait, under a deadline).
class Links {
 public:
  virtual ~Links() = default;
  virtual std::unique_ptr<StartedCall<LinkAnswer>> start(const LinkRequest& request) = 0;
};

// Links whose requests are made at once, the caller waiting for each: the tests' hosts
// (MemoryHost, and NetlinkLinks as the tests' oracle of the kernel's links). start()
// makes the request with the calls below and answers it at once.
class LinksAtOnce : public Links {
 public:
  std::unique_ptr<StartedCall<LinkAnswer>> start(const LinkRequest& request) override;
  virtual std::optional<Link> get(int ifindex) = 0;
  // The link whose name or altname `name` is (the kernel keeps both in one table).
  virtual std::optional<Link> by_name(const std::string& name) = 0;
  virtual int rename(int ifindex, const std::string& name) = 0;
  virtual int set_mtu(int ifindex, uint32_t mtu) = 0;
  // Both in one request (one RTM_SETLINK: half the requests and link events of a new
  // VF's naming). The kernel (do_setlink) applies the MTU first and stops at the first
  // error, so on an error (a name in use) the MTU may have changed and the name not.
  virtual int rename_and_set_mtu(int ifindex, const std::string& name, uint32_t mtu) = 0;
  virtual int add_altname(int ifindex, const std::string& name) = 0;
  virtual int del_altname(int ifindex, const std::string& name) = 0;
  // IFLA_VF_IB_NODE_GUID and IFLA_VF_IB_PORT_GUID of VF `vf` on the PF's netdev.
  virtual int set_vf_guids(int pf_ifindex, uint32_t vf, model::Guid node, model::Guid port) = 0;
  // kSetUp and kSetVfPort: made by hosts that send plain_link_request_bytes() (the
  // helpers); EOPNOTSUPP here.
  virtual int set_up(int /*ifindex*/) { return EOPNOTSUPP; }
  virtual int set_vf_port(const LinkRequest& /*request*/) { return EOPNOTSUPP; }
};

// The bytes of `request` as an rtnetlink message (sequence number and port left 0).
std::vector<uint8_t> link_request_bytes(const LinkRequest& request);
// The same for a lookup (kGet, kByName) or a change (kSet), laid out as libnl lays it,
// without libnl's message (link_request_bytes.cpp); and for kSetUp and kSetVfPort, which
// only this builds; nothing for the other kinds.
std::optional<std::vector<uint8_t>> plain_link_request_bytes(const LinkRequest& request);
// `request` as libnl builds it, whatever its kind: what plain_link_request_bytes() is
// held to by its test.
std::vector<uint8_t> libnl_link_request_bytes(const LinkRequest& request);

// The real thing, over libnl, from the calling thread. Not thread-safe: one per thread.
class NetlinkLinks final : public LinksAtOnce {
 public:
  NetlinkLinks();  // throws std::runtime_error when netlink cannot be opened
  ~NetlinkLinks() override;
  NetlinkLinks(const NetlinkLinks&) = delete;
  NetlinkLinks& operator=(const NetlinkLinks&) = delete;

  std::optional<Link> get(int ifindex) override;
  std::optional<Link> by_name(const std::string& name) override;
  int rename(int ifindex, const std::string& name) override;
  int set_mtu(int ifindex, uint32_t mtu) override;
  int rename_and_set_mtu(int ifindex, const std::string& name, uint32_t mtu) override;
  int add_altname(int ifindex, const std::string& name) override;
  int del_altname(int ifindex, const std::string& name) override;
  int set_vf_guids(int pf_ifindex, uint32_t vf, model::Guid node, model::Guid port) override;

 private:
  struct Socket;
  Socket* socket_;
};

// An altname as a LinkEvent's altnames_gone holds it: its hash (what a watch of every
// link's altnames keeps in 8 bytes).
inline uint64_t altname_key(std::string_view altname) {
  return std::hash<std::string_view>{}(altname);
}

// A change of a link, as the kernel announces it to RTNLGRP_LINK.
struct LinkEvent {
  bool removed = false;  // RTM_DELLINK
  int ifindex = 0;
  std::string name;
  uint32_t mtu = 0;
  // Its altnames (IFLA_PROP_LIST; none there: none); nullopt where the source does not say.
  std::optional<std::vector<std::string>> altnames{};
  // The altnames an earlier event of the link showed that this one does not (deleted
  // since), as altname_key() of each. Filled by the reader that holds the events in
  // order (daemon::DriftWatch).
  std::vector<uint64_t> altnames_gone{};
};

// Link events as they come: a descriptor readable when some wait, and the events.
class LinkEvents {
 public:
  virtual ~LinkEvents() = default;
  // Readable when events wait.
  [[nodiscard]] virtual int fd() const = 0;
  // The events that wait (never blocks). `overflowed` is set when some were dropped
  // (ENOBUFS): the caller must then look at everything again.
  virtual std::vector<LinkEvent> drain(bool* overflowed) = 0;
};

// Listens to link events of the daemon's namespace. Open it before reading the links,
// so that nothing that changes in between goes unseen.
class LinkMonitor final : public LinkEvents {
 public:
  LinkMonitor();  // throws std::runtime_error when netlink cannot be opened
  ~LinkMonitor() override;
  LinkMonitor(const LinkMonitor&) = delete;
  LinkMonitor& operator=(const LinkMonitor&) = delete;
  [[nodiscard]] int fd() const override;
  std::vector<LinkEvent> drain(bool* overflowed) override;

 private:
  struct Socket;
  Socket* socket_;
};

// The bytes of the RTM_SETLINK request set_vf_guids sends (without sequence number),
// so that tests can check it attribute by attribute where no IPoIB netdev exists.
std::vector<uint8_t> build_vf_guids_request(int pf_ifindex, uint32_t vf, model::Guid node,
                                            model::Guid port);

}  // namespace vfready::host
