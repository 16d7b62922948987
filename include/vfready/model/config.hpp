// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vfready/model/guid.hpp"
#include "vfready/model/mac.hpp"
#include "vfready/model/name_template.hpp"
#include "vfready/model/pci_address.hpp"
#include "vfready/model/result.hpp"
#include "vfready/model/version.hpp"

// vfready's configuration: which PFs get how many VFs, with which names, GUIDs and
// MTU, and how long each step may take. config/vfready.schema.json documents it.
namespace vfready::model {

enum class LinkLayer { kInfiniBand, kEthernet };
const char* to_string(LinkLayer layer);

enum class GuidScheme { kDerived, kPool, kExplicit };

// Which PFs an entry applies to: PCI addresses, or every function with this device
// ID (and link layer), in PCI address order. Never an mlx5_N index: those follow probe
// order and change between boots.
struct PfSelector {
  std::vector<PciAddress> pci;  // empty: select by device
  std::optional<uint16_t> device;
  std::optional<LinkLayer> link_layer;
};

struct GuidConfig {
  GuidScheme scheme = GuidScheme::kDerived;
  Guid pool_first{0};  // kPool: VF n of the k-th PF of the entry gets first + k*vfs + n
  Guid pool_last{0};
  std::vector<Guid> guids;  // kExplicit: one per VF, for one PF selected by PCI address
  GuidPolicy policy = GuidPolicy::kFollow;  // OFED sriov/<vf>/policy
};

enum class MacScheme { kDerived, kPool, kExplicit };

// How an Ethernet entry's VFs get their MACs (docs/configuration.md): derived from the
// PF's burned-in MAC, from a pool (VF n of the k-th PF of the entry gets first + k*vfs +
// n), or one given per VF.
struct MacConfig {
  MacScheme scheme = MacScheme::kDerived;
  Mac pool_first{};
  Mac pool_last{};
  std::vector<Mac> macs;  // kExplicit: one per VF, for one PF selected by PCI address
};

// IFLA_VF_LINK_STATE: the VF's link as the PF's (auto), or forced up or down.
enum class VfLinkState : uint8_t { kAuto = 0, kEnable = 1, kDisable = 2 };
const char* to_string(VfLinkState state);

// What an Ethernet entry sets of each VF through its PF's netdev besides the MAC
// (do_setvfinfo() in net/core/rtnetlink.c): nothing that is not configured.
struct VfPortConfig {
  std::optional<uint16_t> vlan;  // 0 (none) to 4094
  uint8_t qos = 0;               // 802.1p priority with the VLAN, 0-7
  std::optional<bool> trust;
  std::optional<bool> spoofchk;
  std::optional<VfLinkState> link_state;
  [[nodiscard]] bool any() const { return vlan || trust || spoofchk || link_state; }
};

struct PfConfig {
  std::string source;     // the file this entry came from
  std::string json_path;  // "$.pfs[0]"
  PfSelector select;
  uint16_t vfs = 0;
  LinkLayer link_layer = LinkLayer::kInfiniBand;
  std::optional<uint32_t> pf_mtu;
  std::optional<uint32_t> vf_mtu;
  std::optional<NameTemplate> pf_name;
  std::optional<NameTemplate> vf_name;
  std::vector<NameTemplate> pf_altnames;
  std::vector<NameTemplate> vf_altnames;
  GuidConfig guid;       // InfiniBand entries
  MacConfig mac;         // Ethernet entries
  VfPortConfig vf_port;  // Ethernet entries
  bool require_port_active = true;
  // A selector that finds nothing on this host (no function of the device ID, or absent
  // PCI addresses) is fine: the entry is for hosts that have them.
  bool optional = false;
};

struct Timeouts {
  uint32_t numvfs_ms = 120000;      // one sriov_numvfs write (the driver probes every VF)
  uint32_t bind_ms = 30000;         // one VF bind
  uint32_t udev_ms = 30000;         // a VF netdev appearing and udev initializing it
  uint32_t port_active_ms = 60000;  // ports reaching ACTIVE
  // Any other call that takes a device lock: reading sriov_numvfs, autoprobe, unbind,
  // OFED's GUID files. Past it (or numvfs_ms, bind_ms for theirs) the PF is stuck.
  uint32_t device_call_ms = 10000;
  // Required modules missing at start are waited for this long (a driver loader such as
  // openibd may still be loading them) before the driver check fails.
  uint32_t modules_ms = 30000;
};

// Files vfreadyd keeps up to date on every change, for what reads the node without D-Bus:
// vfreadyctl when the daemon is gone, Node Feature Discovery, node_exporter. nullopt
// (false in the file): not written. The NFD and metrics files are written only when their directory
// exists.
struct PublishConfig {
  std::optional<std::string> status_file = "/run/vfready/status.json";
  std::optional<std::string> nfd_file = "/etc/kubernetes/node-feature-discovery/features.d/vfready";
  std::optional<std::string> metrics_file =
      "/var/lib/node_exporter/textfile_collector/vfready.prom";
};

struct Config {
  std::vector<PfConfig> pfs;
  Timeouts timeouts;
  // Whether a bring-up with some PFs failed still tells systemd READY=1: one bad cable
  // should not keep a node's other rails out of the cluster.
  bool ready_when_degraded = true;
  PublishConfig publish;
  std::vector<std::string> required_modules = {"mlx5_core", "mlx5_ib", "ib_core", "ib_ipoib"};
  // Minimum firmware per PCI device ID (added to and overriding the shipped table).
  std::map<uint16_t, Version> firmware_minimums;
  std::vector<std::string> files;  // the files read: the main one, then its drop-ins
};

// One configuration file's text and where it came from.
struct ConfigSource {
  std::string path;
  std::string text;
};

// Parses the main file and its drop-ins (in the order given: name order), each
// merged over the previous as a JSON merge patch (RFC 7386). Errors name the file, the
// JSON path, the value and what is valid; unknown keys are errors.
Result<Config> parse_config(const std::vector<ConfigSource>& sources);

}  // namespace vfready::model
