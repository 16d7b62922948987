// SPDX-License-Identifier: Apache-2.0
// A link request made at once with a Links' own calls, and a request in words.
#include <cerrno>
#include <string>

#include "vfready/host/links.hpp"

namespace vfready::host {

std::string describe(const LinkRequest& request) {
  const auto link = "ifindex " + std::to_string(request.ifindex);
  switch (request.kind) {
    case LinkRequest::Kind::kGet:
      return "a netlink lookup of " + link;
    case LinkRequest::Kind::kByName:
      return "a netlink lookup of the name " + request.name;
    case LinkRequest::Kind::kSet:
      return "a netlink change of " + link +
             (request.name.empty() ? "" : ": name " + request.name) +
             (request.mtu
                  ? (request.name.empty() ? ": MTU " : ", MTU ") + std::to_string(*request.mtu)
                  : "");
    case LinkRequest::Kind::kAddAltname:
      return "a netlink request adding altname " + request.name + " to " + link;
    case LinkRequest::Kind::kDelAltname:
      return "a netlink request taking altname " + request.name + " from " + link;
    case LinkRequest::Kind::kSetVfGuids:
      return "a netlink change of VF " + std::to_string(request.vf) + "'s GUIDs on " + link;
  }
  return "a netlink request";
}

std::unique_ptr<StartedCall<LinkAnswer>> Links::start(const LinkRequest& request) {
  const auto found = [](std::optional<Link> link) {
    const int err = link ? 0 : ENODEV;
    return answered(LinkAnswer{err, std::move(link)});
  };
  switch (request.kind) {
    case LinkRequest::Kind::kGet:
      return found(get(request.ifindex));
    case LinkRequest::Kind::kByName:
      return found(by_name(request.name));
    case LinkRequest::Kind::kSet:
      if (request.name.empty()) {
        return answered(LinkAnswer{request.mtu ? set_mtu(request.ifindex, *request.mtu) : 0});
      }
      return answered(
          LinkAnswer{request.mtu ? rename_and_set_mtu(request.ifindex, request.name, *request.mtu)
                                 : rename(request.ifindex, request.name)});
    case LinkRequest::Kind::kAddAltname:
      return answered(LinkAnswer{add_altname(request.ifindex, request.name)});
    case LinkRequest::Kind::kDelAltname:
      return answered(LinkAnswer{del_altname(request.ifindex, request.name)});
    case LinkRequest::Kind::kSetVfGuids:
      return answered(LinkAnswer{
          set_vf_guids(request.ifindex, request.vf, request.node_guid, request.port_guid)});
  }
  return answered(LinkAnswer{EINVAL});
}

}  // namespace vfready::host
