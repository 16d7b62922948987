// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <string_view>

// The events an operator looks for in the journal: the bring-up's outcome, and every
// kind of problem. Each has a MESSAGE_ID of its own, an entry in systemd/vfready.catalog
// that explains it, and a name that is its stable code in the status (D-Bus, JSON).
namespace vfready::model {

enum class EventKind {
  kReady,               // every configured PF is ready
  kDegraded,            // some PFs are ready, some failed
  kFailed,              // no PF is ready, or the driver check failed
  kDriverMismatch,      // a module does not fit the running kernel
  kEthernetFallback,    // a port runs Ethernet where InfiniBand is configured
  kLinkLayerMismatch,   // a port runs another link layer than configured (not Ethernet)
  kFirmwareTooOld,      // firmware below the minimum for its device
  kFirmwareUnreadable,  // a PF's firmware version cannot be read
  kGuidConflict,        // a VF in use carries another GUID than configured
  kNameConflict,        // a target name is held by a netdev vfready does not manage
  kConfigInvalid,       // the configuration does not fit this host
  kModuleMissing,       // a required kernel module is not loaded
  kDriverProbeFailed,   // the driver failed to probe a PF
  kPfMissing,           // a configured PF is not on this host
  kPfNoDriver,          // a configured PF has no driver bound
  kPfUnhealthy,         // a PF's driver is bound but made no netdev or RDMA device
  kSriovDisabled,       // a PF has no SR-IOV capability
  kTooFewVfs,           // a PF offers fewer VFs than configured
  kVfsInUse,            // VFs in use keep a PF's VF count as it is
  kNumvfsFailed,        // the driver refused to create VFs
  kAutoprobeFailed,     // sriov_drivers_autoprobe could not be written
  kVfMissing,           // a VF is missing after its creation, or from the pass's read
  kGuidSetFailed,       // a VF's GUID could not be set
  kGuidWrong,           // a VF does not use its GUID
  kMacSetFailed,        // an Ethernet VF's MAC or settings could not be set through its PF
  kMacWrong,            // an Ethernet VF's netdev does not carry its MAC
  kUnbindFailed,        // a VF could not be unbound
  kVfProbeFailed,       // a VF's probe failed
  kVfNoNetdev,          // a VF has no netdev
  kVfNoRdma,            // a ConnectX RoCE VF has no RDMA device, or a VF's port cannot be read
  kUdevTimeout,         // udev did not finish with a VF's netdev in time
  kLinkConfigFailed,    // a netdev could not be renamed, or its altname or MTU set
  kLinkUpNotRenamed,    // an UP netdev was left unrenamed: the kernel renames none before 6.2
  kNameMismatch,        // a netdev does not carry its configured name
  kNameContested,       // another tool keeps renaming a netdev vfready names back
  kNetdevGone,          // a netdev vanished during the bring-up
  kPortNotActive,       // a port did not become ACTIVE
  kPfVanished,          // a PF vanished during the bring-up
  kPfStuck,             // a call into a PF's driver did not return within its deadline
  kHostReadFailed,      // the host could not be read
  kReloadRefused,       // a new configuration was refused
  kInternalError,       // vfready met an error of its own
};

struct EventInfo {
  EventKind kind;
  std::string_view name;        // short and stable: VFREADY_EVENT=, a problem's code
  std::string_view message_id;  // 32 hex digits, as journalctl shows it
  std::string_view remedy;      // what to do, in one line ("" for outcomes)
};

inline constexpr std::array<EventInfo, 42> kEvents = {{
    {EventKind::kReady, "ready", "99bf23c319f44843ab34d9e0a3cca4b0", ""},
    {EventKind::kDegraded, "degraded", "000ba400a11b45e5b06312b99feaa586", ""},
    {EventKind::kFailed, "failed", "b0edcb1ab0f142ffbbed1ff88173f756", ""},
    {EventKind::kDriverMismatch, "driver-mismatch", "de43657756564999a536a15373fce95e",
     "install the driver release built for the running kernel"},
    {EventKind::kEthernetFallback, "ethernet-fallback", "22631b6c3b494f8c90bbb39e2e7b6b71",
     "mlxconfig -d <PCI address> set LINK_TYPE_P1=1, then mlxfwreset or reboot"},
    {EventKind::kFirmwareTooOld, "firmware-too-old", "10214f53b3a646609524d13de6947293",
     "update the firmware (mlxfwmanager -u), then reboot"},
    {EventKind::kFirmwareUnreadable, "firmware-unreadable", "70bb07a5444047619691ce2ae5dec3ac",
     "read the firmware version with mlxfwmanager or flint; update the driver or firmware if "
     "fw_ver does not read as major.minor.patch"},
    {EventKind::kGuidConflict, "guid-conflict", "b3ef9e1992e24d81ae3878e7a8ff815f",
     "once nothing uses the VF, `vfreadyctl reconcile` assigns its GUID"},
    {EventKind::kNameConflict, "name-conflict", "2707339803614861ba48d31a0e361b17",
     "rename the other device, or choose other name templates"},
    {EventKind::kLinkLayerMismatch, "link-layer-mismatch", "81c8d76a6f974c5692069985ee899604",
     "set the port's link type with mlxconfig (LINK_TYPE_P<n>), then mlxfwreset or reboot"},
    {EventKind::kConfigInvalid, "config-invalid", "3b1ceff4acfe4991b5df40b85ed725f8",
     "fix the configuration file and JSON path the message names; `vfreadyd --check-config` shows "
     "the plan"},
    {EventKind::kModuleMissing, "module-missing", "69d949fd963940f1b83625ece0b807db",
     "load it (modprobe <module>) and read the kernel log for why it did not load at boot"},
    {EventKind::kDriverProbeFailed, "driver-probe-failed", "1fd607a5f45149e9be9dfa242d2e70d5",
     "read the kernel log for the PF's probe; check the driver against the kernel and the firmware "
     "version"},
    {EventKind::kPfMissing, "pf-missing", "bdb3d501476940a68db82a131a2c6560",
     "check the address in the configuration against `lspci -D`"},
    {EventKind::kPfNoDriver, "pf-no-driver", "b2871352d78a4656bad2239866bdc42a",
     "load mlx5_core and read the kernel log for the PF's address"},
    {EventKind::kPfUnhealthy, "pf-unhealthy", "40cbc083091f43cc90a8ec11279e2f4f",
     "read the kernel log for the PF (health, fatal errors); reset it (mlxfwreset) or reload "
     "mlx5_core, or reboot; vfready brings it up when its netdev appears"},
    {EventKind::kSriovDisabled, "sriov-disabled", "c5778ea0b4014102a54fb1e599f36f63",
     "mlxconfig -d <PCI address> set SRIOV_EN=1 NUM_OF_VFS=<n>, then reboot"},
    {EventKind::kTooFewVfs, "too-few-vfs", "f1dbbc8a93b7484cb523e7134921c5fb",
     "mlxconfig -d <PCI address> set NUM_OF_VFS=<n> and reboot, or configure fewer VFs"},
    {EventKind::kVfsInUse, "vfs-in-use", "bee1a82b2efd4183a70feaa7439711b2",
     "free the VFs in use, or configure the count the PF has; then `vfreadyctl reconcile`"},
    {EventKind::kNumvfsFailed, "numvfs-failed", "c316103173b1438cbbf9ccd38dfb1a61",
     "read the kernel log for the driver's SR-IOV setup of the PF"},
    {EventKind::kAutoprobeFailed, "autoprobe-failed", "9b7d011f8cf24310acaa62c7a2af1ec0",
     "check the PF's driver and the kernel log; `vfreadyctl reconcile` tries again"},
    {EventKind::kVfMissing, "vf-missing", "8537c900e737474c8b3bd7f9ec6f4139",
     "read the kernel log for the PF's SR-IOV setup"},
    {EventKind::kGuidSetFailed, "guid-set-failed", "9bd7ccd25524459a8d950bb01e761bf5",
     "check that the PF has OFED's sriov/ sysfs, or an IPoIB netdev for netlink; read the kernel "
     "log"},
    {EventKind::kGuidWrong, "guid-wrong", "c60e895c5866456b87b2c2659b8cfdd5",
     "vfready re-probes it with its GUID; if that recurs, stop the other tool from setting GUIDs"},
    {EventKind::kMacSetFailed, "mac-set-failed", "57ec543210cc4003bef02e7b1a493945",
     "check that the PF's driver sets VF MACs and the settings configured (ip link set <PF> vf "
     "N ...); read the kernel log"},
    {EventKind::kMacWrong, "mac-wrong", "9fc1a278abf248fb9cea6a0620aae2f7",
     "vfready re-probes it with its MAC; if that recurs, stop the other tool from setting MACs"},
    {EventKind::kUnbindFailed, "unbind-failed", "333bca49b41d413da443bf8908f70ff0",
     "read the kernel log; `vfreadyctl reconcile` tries again"},
    {EventKind::kVfProbeFailed, "vf-probe-failed", "274d67c76b944b85b5741611d3b2dbaa",
     "read the kernel log for the VF's probe"},
    {EventKind::kVfNoNetdev, "vf-no-netdev", "d7c99203399d402da65a0575d97d92da",
     "read the kernel log for the VF's probe"},
    {EventKind::kVfNoRdma, "vf-no-rdma", "b8c096e544f540b5acb2a8f5fb80409e",
     "load mlx5_ib and read the kernel log for its probe of the VF"},
    {EventKind::kUdevTimeout, "udev-timeout", "5e4f401cb7654a869cfe86f7c075d8b4",
     "check udevd (systemctl status systemd-udevd) and its rules for the device; raise "
     "timeouts.udev_ms if it is merely slow"},
    {EventKind::kLinkConfigFailed, "link-config-failed", "06577e52a5274f95a592f9c38fbc7223",
     "check the name templates and the MTU in the configuration against the device"},
    {EventKind::kLinkUpNotRenamed, "link-up-not-renamed", "d59448d4826145f88ec4093ec3ed6d2f",
     "it is renamed at the next boot, before it is up; or set it down (ip link set <name> down) "
     "and `vfreadyctl reconcile`"},
    {EventKind::kNameMismatch, "name-mismatch", "adb4bf25afec4d64a574e16638bdbc0a",
     "find what renames it (udev rules, NetworkManager, systemd.link files) and leave the VFs to "
     "vfready"},
    {EventKind::kNameContested, "name-contested", "27c930c1a85e41209bb4d7fc61a6f4cc",
     "find and stop the other tool (udev rules with NAME=, NetworkManager, systemd.link files); "
     "vfready names the link back once a minute meanwhile"},
    {EventKind::kNetdevGone, "netdev-gone", "c83cdf73515f4fbb8da1c12fea333e86",
     "`vfreadyctl reconcile` brings it back if the VF is still there"},
    {EventKind::kPortNotActive, "port-not-active", "a4d252b051ad4fe589250fedc686de3a",
     "check the cable, the switch port and the subnet manager (ibstat, sminfo)"},
    {EventKind::kPfVanished, "pf-vanished", "447b41946e244772b469442ebfed967c",
     "read the kernel log for the PF; `vfreadyctl reconcile` tries again"},
    {EventKind::kPfStuck, "pf-stuck", "c72cdb7281f84e9baf031aba856a093b",
     "read the kernel log for the PF (hung task warnings, firmware errors); vfready retries the "
     "PF when the call returns, and a reboot frees a driver that never returns"},
    {EventKind::kHostReadFailed, "host-read-failed", "542e2c04adc040eeadd83428b8f12eae",
     "the message names what failed; check that vfreadyd runs as root with /sys writable"},
    {EventKind::kReloadRefused, "reload-refused", "948dd8c3caea4aa6bb4a2b9a86c602cf",
     "fix the file and JSON path the message names, then reload again"},
    {EventKind::kInternalError, "internal-error", "2d612c0c9d514568b43d5a752955f788",
     "report it with the journal of vfreadyd; `vfreadyctl reconcile` tries again"},
}};
// One entry for each kind, none left to its default (an empty name and MESSAGE_ID).
static_assert(kEvents.size() == static_cast<std::size_t>(EventKind::kInternalError) + 1);
static_assert(kEvents.back().kind == EventKind::kInternalError);

constexpr const EventInfo& event_info(EventKind kind) {
  for (const auto& e : kEvents) {
    if (e.kind == kind) {
      return e;
    }
  }
  return kEvents.front();
}

}  // namespace vfready::model
