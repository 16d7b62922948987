// SPDX-License-Identifier: Apache-2.0
// The daemon's only user of libnl. Changes of a link (name, MTU, VF GUIDs) are built
// by libnl-route's setters; libnl 3.7 has no altname API and no way to look a link up
// without a cache, so those messages are built here. Every answer is read with our own
// callbacks, because libnl's own calls turn the kernel's errno into libnl error codes.
#include <linux/if_link.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/link/sriov.h>
#include <sys/socket.h>

#include <cstring>
#include <memory>
#include <stdexcept>

#include "vfready/host/kernel_calls.hpp"
#include "vfready/host/links.hpp"

namespace vfready::host {

struct NetlinkLinks::Socket {
  nl_sock* sk = nullptr;
};

namespace {

nl_msg* link_request(int type, int flags, int ifindex) {
  nl_msg* msg = nlmsg_alloc_simple(type, flags);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = ifindex;
  nlmsg_append(msg, &ifi, sizeof ifi, NLMSG_ALIGNTO);
  return msg;
}

bool parse_link(nlmsghdr* h, Link* out) {
  if (h->nlmsg_type != RTM_NEWLINK) {
    return false;
  }
  const auto* ifi = static_cast<const ifinfomsg*>(nlmsg_data(h));
  nlattr* tb[IFLA_MAX + 1] = {};
  if (nlmsg_parse(h, sizeof(ifinfomsg), tb, IFLA_MAX, nullptr) < 0) {
    return false;
  }
  out->ifindex = ifi->ifi_index;
  out->name = tb[IFLA_IFNAME] != nullptr ? nla_get_string(tb[IFLA_IFNAME]) : "";
  out->mtu = tb[IFLA_MTU] != nullptr ? nla_get_u32(tb[IFLA_MTU]) : 0;
  out->altnames.clear();
  if (tb[IFLA_PROP_LIST] != nullptr) {
    nlattr* prop = nullptr;
    int rem = 0;
    nla_for_each_nested(prop, tb[IFLA_PROP_LIST], rem) {
      if (nla_type(prop) == IFLA_ALT_IFNAME) {
        out->altnames.emplace_back(nla_get_string(prop));
      }
    }
  }
  return true;
}

int collect(nl_msg* msg, void* arg) {
  Link link;
  if (parse_link(nlmsg_hdr(msg), &link)) {
    static_cast<std::vector<Link>*>(arg)->push_back(std::move(link));
  }
  return NL_OK;
}

int on_error(sockaddr_nl* /*who*/, nlmsgerr* e, void* arg) {
  *static_cast<int*>(arg) = -e->error;
  return NL_STOP;
}

// Sends a request and reads the answer: 0 or the errno the kernel gave. Links in the
// answer go to `out` when given.
int exchange(nl_sock* sk, nl_msg* msg, std::vector<Link>* out = nullptr) {
  count(KernelCall::kNetlinkRequest);
  int err = nl_send_auto(sk, msg);
  nlmsg_free(msg);
  if (err < 0) {
    return EIO;
  }
  int kernel_errno = 0;
  // nl_socket_get_cb() takes a reference, which the clone does not need.
  nl_cb* base = nl_socket_get_cb(sk);
  nl_cb* cb = nl_cb_clone(base);
  nl_cb_put(base);
  if (out != nullptr) {
    nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, collect, out);
  }
  nl_cb_err(cb, NL_CB_CUSTOM, on_error, &kernel_errno);
  err = nl_recvmsgs(sk, cb);
  nl_cb_put(cb);
  if (kernel_errno != 0) {
    return kernel_errno;
  }
  return err < 0 ? EIO : 0;
}

// The one place that builds messages attribute by attribute, for what libnl 3.7 has
// no API for: altnames (RTM_NEWLINKPROP / RTM_DELLINKPROP with a nested
// IFLA_PROP_LIST), and lookups of a link by ifindex, name or altname without VF details
// or stats (libnl's rtnl_link_build_get_request asks for VF details, which for a PF
// with many VFs fill the answer, and cannot name an altname).
enum class Raw { kLookup, kAddAltname, kDelAltname };
nl_msg* raw_link_message(Raw what, int ifindex, const std::string& name = {}) {
  nl_msg* msg = nullptr;
  switch (what) {
    case Raw::kLookup:
      msg = link_request(RTM_GETLINK, NLM_F_REQUEST, ifindex);
      nla_put_u32(msg, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
      // The kernel looks names and altnames up in one table; IFLA_IFNAME takes at
      // most 15 bytes, longer altnames go as IFLA_ALT_IFNAME.
      if (!name.empty()) {
        nla_put_string(msg, name.size() < IFNAMSIZ ? IFLA_IFNAME : IFLA_ALT_IFNAME, name.c_str());
      }
      return msg;
    case Raw::kAddAltname:
      msg = link_request(RTM_NEWLINKPROP,
                         NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL | NLM_F_APPEND,
                         ifindex);
      break;
    case Raw::kDelAltname:
      msg = link_request(RTM_DELLINKPROP, NLM_F_REQUEST | NLM_F_ACK, ifindex);
      break;
  }
  nlattr* list = nla_nest_start(msg, IFLA_PROP_LIST);
  nla_put_string(msg, IFLA_ALT_IFNAME, name.c_str());
  nla_nest_end(msg, list);
  return msg;
}

using LinkPtr = std::unique_ptr<rtnl_link, void (*)(rtnl_link*)>;

LinkPtr new_link() {
  LinkPtr link(rtnl_link_alloc(), rtnl_link_put);
  if (!link) {
    throw std::bad_alloc();
  }
  return link;
}

// An acked RTM_SETLINK of the link `ifindex` carrying what `changes` sets, built by
// libnl. It builds RTM_NEWLINK, which the kernel takes for an existing link as it
// takes RTM_SETLINK; SETLINK says what is meant (libnl's own rtnl_link_change falls
// back to it) and is what every kernel since VF GUIDs knows.
nl_msg* change_request(int ifindex, rtnl_link* changes) {
  auto orig = new_link();
  rtnl_link_set_ifindex(orig.get(), ifindex);
  nl_msg* msg = nullptr;
  if (rtnl_link_build_change_request(orig.get(), changes, NLM_F_REQUEST | NLM_F_ACK, &msg) < 0) {
    throw std::runtime_error("libnl could not build a link change request");
  }
  nlmsg_hdr(msg)->nlmsg_type = RTM_SETLINK;
  return msg;
}

nl_msg* vf_guids_message(int pf_ifindex, uint32_t vf, model::Guid node, model::Guid port) {
  auto changes = new_link();
  rtnl_link_vf* info = rtnl_link_vf_alloc();
  if (info == nullptr) {
    throw std::bad_alloc();
  }
  rtnl_link_vf_set_index(info, vf);
  rtnl_link_vf_set_ib_node_guid(info, node.value());
  rtnl_link_vf_set_ib_port_guid(info, port.value());
  const int added = rtnl_link_vf_add(changes.get(), info);
  rtnl_link_vf_put(info);
  if (added < 0) {
    throw std::runtime_error("libnl could not add VF info to a link change");
  }
  return change_request(pf_ifindex, changes.get());
}

}  // namespace

NetlinkLinks::NetlinkLinks() : socket_(new Socket) {
  socket_->sk = nl_socket_alloc();
  if (socket_->sk == nullptr || nl_connect(socket_->sk, NETLINK_ROUTE) < 0) {
    nl_socket_free(socket_->sk);
    delete socket_;
    throw std::runtime_error("cannot open an rtnetlink socket");
  }
  // Each answer in one read. Answers are one link without stats or VF details (a few
  // KiB, altnames included) or an ACK; libnl allocates this much for every read, which at
  // the 1 MiB this once was cost a large malloc and free per request. An answer that
  // did not fit would fail the request (NLE_MSG_TRUNC), never be cut short.
  nl_socket_set_msg_buf_size(socket_->sk, std::size_t{64} * 1024);
  // Requests say themselves whether they want an ACK: an ACK nobody reads would be
  // taken for the answer to the next request.
  nl_socket_disable_auto_ack(socket_->sk);
}

NetlinkLinks::~NetlinkLinks() {
  nl_socket_free(socket_->sk);
  delete socket_;
}

std::optional<Link> NetlinkLinks::get(int ifindex) {
  std::vector<Link> out;
  if (exchange(socket_->sk, raw_link_message(Raw::kLookup, ifindex), &out) != 0 || out.empty()) {
    return std::nullopt;
  }
  return out.front();
}

std::optional<Link> NetlinkLinks::by_name(const std::string& name) {
  std::vector<Link> out;
  if (exchange(socket_->sk, raw_link_message(Raw::kLookup, 0, name), &out) != 0 || out.empty()) {
    return std::nullopt;  // ENODEV: nobody has it
  }
  return out.front();
}

int NetlinkLinks::rename(int ifindex, const std::string& name) {
  auto changes = new_link();
  rtnl_link_set_name(changes.get(), name.c_str());
  return exchange(socket_->sk, change_request(ifindex, changes.get()));
}

int NetlinkLinks::set_mtu(int ifindex, uint32_t mtu) {
  auto changes = new_link();
  rtnl_link_set_mtu(changes.get(), mtu);
  return exchange(socket_->sk, change_request(ifindex, changes.get()));
}

int NetlinkLinks::rename_and_set_mtu(int ifindex, const std::string& name, uint32_t mtu) {
  auto changes = new_link();
  rtnl_link_set_name(changes.get(), name.c_str());
  rtnl_link_set_mtu(changes.get(), mtu);
  return exchange(socket_->sk, change_request(ifindex, changes.get()));
}

int NetlinkLinks::add_altname(int ifindex, const std::string& name) {
  return exchange(socket_->sk, raw_link_message(Raw::kAddAltname, ifindex, name));
}

int NetlinkLinks::del_altname(int ifindex, const std::string& name) {
  return exchange(socket_->sk, raw_link_message(Raw::kDelAltname, ifindex, name));
}

int NetlinkLinks::set_vf_guids(int pf_ifindex, uint32_t vf, model::Guid node, model::Guid port) {
  return exchange(socket_->sk, vf_guids_message(pf_ifindex, vf, node, port));
}

std::vector<uint8_t> build_vf_guids_request(int pf_ifindex, uint32_t vf, model::Guid node,
                                            model::Guid port) {
  nl_msg* msg = vf_guids_message(pf_ifindex, vf, node, port);
  const nlmsghdr* h = nlmsg_hdr(msg);
  const auto* bytes = reinterpret_cast<const uint8_t*>(h);  // NOLINT: raw message bytes
  std::vector<uint8_t> out(bytes, bytes + h->nlmsg_len);
  nlmsg_free(msg);
  return out;
}

struct LinkMonitor::Socket {
  nl_sock* sk = nullptr;
  std::vector<LinkEvent>* into = nullptr;
};

namespace {

int on_link_event(nl_msg* msg, void* arg) {
  auto* into = static_cast<std::vector<LinkEvent>*>(arg);
  const nlmsghdr* h = nlmsg_hdr(msg);
  if (h->nlmsg_type != RTM_NEWLINK && h->nlmsg_type != RTM_DELLINK) {
    return NL_OK;
  }
  nlattr* tb[IFLA_MAX + 1] = {};
  if (nlmsg_parse(const_cast<nlmsghdr*>(h), sizeof(ifinfomsg), tb, IFLA_MAX,  // NOLINT
                  nullptr) < 0) {
    return NL_OK;
  }
  const auto* info = static_cast<const ifinfomsg*>(nlmsg_data(h));
  LinkEvent e;
  e.removed = h->nlmsg_type == RTM_DELLINK;
  e.ifindex = info->ifi_index;
  if (tb[IFLA_IFNAME] != nullptr) {
    e.name = nla_get_string(tb[IFLA_IFNAME]);
  }
  if (tb[IFLA_MTU] != nullptr) {
    e.mtu = nla_get_u32(tb[IFLA_MTU]);
  }
  into->push_back(std::move(e));
  return NL_OK;
}

}  // namespace

LinkMonitor::LinkMonitor() : socket_(new Socket) {
  socket_->sk = nl_socket_alloc();
  if (socket_->sk == nullptr || nl_connect(socket_->sk, NETLINK_ROUTE) < 0 ||
      nl_socket_add_membership(socket_->sk, RTNLGRP_LINK) < 0) {
    if (socket_->sk != nullptr) {
      nl_socket_free(socket_->sk);
    }
    delete socket_;
    throw std::runtime_error("cannot open a netlink socket for link events");
  }
  nl_socket_disable_seq_check(socket_->sk);
  nl_socket_set_nonblocking(socket_->sk);
  nl_socket_modify_cb(socket_->sk, NL_CB_VALID, NL_CB_CUSTOM, on_link_event, nullptr);
  // A bring-up makes a burst of events (each VF's netdev appears, is renamed, gets its
  // MTU and altnames: some 5 per VF, 2 KiB or more each as the kernel counts) while a
  // busy loop may not read for a while. The default buffer (rmem_default, ~200 KiB)
  // overruns at a few dozen VFs, and an overrun costs a pass over every PF. With
  // CAP_NET_ADMIN the buffer may exceed rmem_max, as udevd's and networkd's do; memory
  // is only taken while events wait.
  constexpr int kEventBuffer = 64 * 1024 * 1024;
  if (setsockopt(fd(), SOL_SOCKET, SO_RCVBUFFORCE, &kEventBuffer, sizeof kEventBuffer) != 0) {
    nl_socket_set_buffer_size(socket_->sk, kEventBuffer, 0);  // capped at rmem_max
  }
}

LinkMonitor::~LinkMonitor() {
  nl_socket_free(socket_->sk);
  delete socket_;
}

int LinkMonitor::fd() const { return nl_socket_get_fd(socket_->sk); }

std::vector<LinkEvent> LinkMonitor::drain(bool* overflowed) {
  std::vector<LinkEvent> out;
  *overflowed = false;
  nl_socket_modify_cb(socket_->sk, NL_CB_VALID, NL_CB_CUSTOM, on_link_event, &out);
  for (;;) {
    const int err = nl_recvmsgs_default(socket_->sk);
    if (err == -NLE_NOMEM) {
      *overflowed = true;  // ENOBUFS: events were dropped
      continue;
    }
    if (err < 0) {
      break;  // -NLE_AGAIN: nothing more waits
    }
  }
  return out;
}

}  // namespace vfready::host
