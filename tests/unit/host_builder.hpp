// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "vfready/model/inventory.hpp"

// Builds observed hosts for pure tests: a DGX-like set of PFs, then edits.
namespace vfready::testing {

inline model::PfInfo ib_pf(const std::string& pci, const std::string& netdev, uint64_t node_guid) {
  model::PfInfo pf;
  pf.pci = model::PciAddress::parse(pci).value();
  pf.vendor = 0x15b3;
  pf.device = 0x1021;
  pf.driver = "mlx5_core";
  pf.numa_node = 0;
  pf.netdev = netdev;
  pf.sriov = true;
  pf.totalvfs = 16;
  pf.ib_device = "mlx5_x";
  pf.firmware = model::Version::parse("28.43.1014").value();
  pf.node_guid = model::Guid{node_guid};
  pf.ofed_sriov = true;
  pf.ports = {{"InfiniBand", "4: ACTIVE", "5: LinkUp"}};
  return pf;
}

// The reference DGX H200: eight InfiniBand PFs and two dual-port Ethernet NICs.
inline model::HostInfo dgx_host() {
  model::HostInfo h;
  h.kernel_release = "6.8.0-55-generic";
  h.modules = {
      {"mlx5_core", "24.10-0.7.0"}, {"mlx5_ib", "24.10-0.7.0"}, {"ib_core", {}}, {"ib_ipoib", {}}};
  const char* pcis[] = {"0000:18:00.0", "0000:40:00.0", "0000:4f:00.0", "0000:5e:00.0",
                        "0000:9a:00.0", "0000:c0:00.0", "0000:ce:00.0", "0000:dc:00.0"};
  const char* names[] = {"ibp24s0",  "ibp64s0",  "ibp79s0",  "ibp94s0",
                         "ibp154s0", "ibp192s0", "ibp206s0", "ibp220s0"};
  for (int i = 0; i < 8; ++i) {
    h.functions.push_back(ib_pf(pcis[i], names[i], 0xa088c20300301000ULL + (uint64_t(i) << 16)));
  }
  for (const char* eth : {"0000:29:00.0", "0000:29:00.1", "0000:aa:00.0", "0000:aa:00.1"}) {
    auto pf = ib_pf(eth, std::string("enp") + eth, 0xa088c20300502000ULL);
    pf.ports = {{"Ethernet", "4: ACTIVE", "5: LinkUp"}};
    h.functions.push_back(pf);
  }
  return h;
}

}  // namespace vfready::testing
