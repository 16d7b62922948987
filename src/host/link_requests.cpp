// SPDX-License-Identifier: Apache-2.0
// A link request made at once with a LinksAtOnce's own calls, and a request in words.
#include <cerrno>
#include <string>

#include "vfready/host/links.hpp"

namespace vfready::host {

std::string describe(const LinkRequest& request) {
  // Made for every request (the text of a call that gets stuck): in one allocation.
  std::string out;
  out.reserve(64 + request.name.size());
  const auto link = [&] { out.append("ifindex ").append(std::to_string(request.ifindex)); };
  switch (request.kind) {
    case LinkRequest::Kind::kGet:
      out.append("a netlink lookup of ");
      link();
      if (request.vfs) {
        out.append(" and its VFs");
      }
      return out;
    case LinkRequest::Kind::kByName:
      return out.append("a netlink lookup of the name ").append(request.name);
    case LinkRequest::Kind::kSet:
      out.append("a netlink change of ");
      link();
      if (!request.name.empty()) {
        out.append(": name ").append(request.name);
      }
      if (request.mtu) {
        out.append(request.name.empty() ? ": MTU " : ", MTU ").append(std::to_string(*request.mtu));
      }
      return out;
    case LinkRequest::Kind::kAddAltname:
      out.append("a netlink request adding altname ").append(request.name).append(" to ");
      link();
      return out;
    case LinkRequest::Kind::kDelAltname:
      out.append("a netlink request taking altname ").append(request.name).append(" from ");
      link();
      return out;
    case LinkRequest::Kind::kSetVfGuids:
      out.append("a netlink change of VF ")
          .append(std::to_string(request.vf))
          .append("'s GUIDs on ");
      link();
      return out;
    case LinkRequest::Kind::kSetUp:
      out.append("a netlink change setting ");
      link();
      out.append(" up");
      return out;
    case LinkRequest::Kind::kSetVfPort:
      out.append("a netlink change of VF ").append(std::to_string(request.vf)).append("'s ");
      out.append(request.mac ? "MAC " + request.mac->str() : std::string("settings"));
      out.append(" on ");
      link();
      return out;
  }
  return "a netlink request";
}

std::unique_ptr<StartedCall<LinkAnswer>> LinksAtOnce::start(const LinkRequest& request) {
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
    case LinkRequest::Kind::kSetUp:
      return answered(LinkAnswer{set_up(request.ifindex)});
    case LinkRequest::Kind::kSetVfPort:
      return answered(LinkAnswer{set_vf_port(request)});
  }
  return answered(LinkAnswer{EINVAL});
}

}  // namespace vfready::host
