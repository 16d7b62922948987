// SPDX-License-Identifier: Apache-2.0
#include "ethernet_config.hpp"

#include <algorithm>
#include <string_view>

namespace vfready::model {

const char* to_string(VfLinkState state) {
  switch (state) {
    case VfLinkState::kAuto:
      return "auto";
    case VfLinkState::kEnable:
      return "enable";
    case VfLinkState::kDisable:
      return "disable";
  }
  return "auto";
}

namespace {

Mac mac(const JsonReader& r) {
  auto m = Mac::parse(r.string());
  if (!m) {
    r.fail(m.error().message);
  }
  if (!m->is_assignable()) {
    r.fail("is " + std::string(m->is_zero() ? "zero" : "a group (multicast) address") +
           ": a VF's MAC must be unicast and not zero");
  }
  return m.value();
}

}  // namespace

MacConfig mac_config(const JsonReader& r, const PfConfig& pf) {
  r.only_keys({"scheme", "first", "last", "macs"});
  MacConfig m;
  const auto scheme = r.has("scheme") ? r["scheme"].one_of({"derived", "pool", "explicit"})
                                      : std::string("derived");
  const auto only = [&](std::initializer_list<const char*> keys) {
    for (const char* k : {"first", "last", "macs"}) {
      if (r.has(k) && std::find_if(keys.begin(), keys.end(), [&](const char* want) {
                        return std::string_view(want) == k;
                      }) == keys.end()) {
        r[k].fail("applies to another scheme, not \"" + scheme + "\"");
      }
    }
  };
  if (scheme == "derived") {
    only({});
  } else if (scheme == "pool") {
    only({"first", "last"});
    m.scheme = MacScheme::kPool;
    m.pool_first = mac(r["first"]);
    m.pool_last = mac(r["last"]);
    if (m.pool_last < m.pool_first) {
      r["last"].fail("is below \"first\"");
    }
    // Counting across a first byte would pass group (multicast) addresses.
    if (m.pool_last.bytes()[0] != m.pool_first.bytes()[0]) {
      r["last"].fail("has another first byte than \"first\": a pool stays within one (" +
                     m.pool_first.str().substr(0, 2) +
                     ":..), as a pool across it would hand out "
                     "group (multicast) addresses");
    }
  } else {
    only({"macs"});
    m.scheme = MacScheme::kExplicit;
    if (pf.select.pci.size() != 1) {
      r.fail("explicit MACs need exactly one PF, selected by \"pci\"");
    }
    const auto list = r["macs"];
    if (list.array_size() != pf.vfs) {
      list.fail("has " + std::to_string(list.array_size()) + " MACs for " + std::to_string(pf.vfs) +
                " VFs: give one per VF");
    }
    for (std::size_t i = 0; i < list.array_size(); ++i) {
      m.macs.push_back(mac(list[i]));
    }
  }
  return m;
}

VfPortConfig vf_port_config(const JsonReader& r) {
  VfPortConfig v;
  if (r.has("vlan")) {
    v.vlan = static_cast<uint16_t>(r["vlan"].uint_in(0, 4094));
  }
  if (r.has("qos")) {
    if (!v.vlan) {
      r["qos"].fail("needs a \"vlan\": it is the priority of the VF's VLAN tag");
    }
    v.qos = static_cast<uint8_t>(r["qos"].uint_in(0, 7));
  }
  if (r.has("trust")) {
    v.trust = r["trust"].boolean();
  }
  if (r.has("spoofchk")) {
    v.spoofchk = r["spoofchk"].boolean();
  }
  if (r.has("link_state")) {
    const auto state = r["link_state"].one_of({"auto", "enable", "disable"});
    v.link_state = state == "auto"     ? VfLinkState::kAuto
                   : state == "enable" ? VfLinkState::kEnable
                                       : VfLinkState::kDisable;
  }
  return v;
}

}  // namespace vfready::model
