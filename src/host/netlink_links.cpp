// SPDX-License-Identifier: Apache-2.0
// The daemon's only user of libnl. VF GUID changes are built by libnl-route's setters;
// libnl 3.7 has no altname API and no way to look a link up without a cache, so those
// messages are built here, and so are renames and MTUs (the two attributes, without
// libnl's comparison of two link objects). Every answer is read with our own
// callbacks, because libnl's own calls turn the kernel's errno into libnl error codes.
// Link events are read from the socket straight into one buffer.
#include <linux/if_link.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/link/sriov.h>
#include <sys/socket.h>

#include <linux/if.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

#include "vfready/host/kernel_calls.hpp"
#include "vfready/host/link_message.hpp"
#include "vfready/host/links.hpp"
#include "vfready/host/read_buffer.hpp"

namespace vfready::host {

struct NetlinkLinks::Socket {
  nl_sock* sk = nullptr;
};

namespace {

// Big enough for every request built here (a name, an MTU, an altname nest, a lookup):
// libnl's default is a page, zeroed for each message.
constexpr std::size_t kRequestSize = 512;

nl_msg* link_request(int type, int flags, int ifindex) {
  nl_msg* msg = nlmsg_alloc_size(kRequestSize);
  if (msg == nullptr) {
    throw std::bad_alloc();
  }
  if (nlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, type, 0, flags) == nullptr) {
    nlmsg_free(msg);
    throw std::bad_alloc();
  }
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = ifindex;
  nlmsg_append(msg, &ifi, sizeof ifi, NLMSG_ALIGNTO);
  return msg;
}

int collect(nl_msg* msg, void* arg) {
  const nlmsghdr* h = nlmsg_hdr(msg);
  // NOLINTNEXTLINE(*-reinterpret-cast): the message's bytes
  const std::span bytes(reinterpret_cast<const uint8_t*>(h), h->nlmsg_len);
  if (auto m = parse_link_message(bytes); m && !m->removed) {
    static_cast<std::vector<Link>*>(arg)->push_back(std::move(m->link));
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
// with many VFs fill the answer, and cannot name an altname); and renames, every VF's,
// as an acked RTM_SETLINK with IFLA_IFNAME and IFLA_MTU (what libnl's change request
// builds, without the two link objects it compares to get there).
nl_msg* vf_guids_message(int pf_ifindex, uint32_t vf, model::Guid node, model::Guid port);

nl_msg* link_message(const LinkRequest& request) {
  const auto& name = request.name;
  nl_msg* msg = nullptr;
  switch (request.kind) {
    case LinkRequest::Kind::kSet:
      msg = link_request(RTM_SETLINK, NLM_F_REQUEST | NLM_F_ACK, request.ifindex);
      if ((!name.empty() && nla_put_string(msg, IFLA_IFNAME, name.c_str()) < 0) ||
          (request.mtu && nla_put_u32(msg, IFLA_MTU, *request.mtu) < 0)) {
        nlmsg_free(msg);
        throw std::length_error("a link change request outgrew its message");
      }
      return msg;
    case LinkRequest::Kind::kGet:
    case LinkRequest::Kind::kByName:
      msg = link_request(RTM_GETLINK, NLM_F_REQUEST, request.ifindex);
      nla_put_u32(msg, IFLA_EXT_MASK,
                  RTEXT_FILTER_SKIP_STATS | (request.vfs ? RTEXT_FILTER_VF : 0U));
      // The kernel looks names and altnames up in one table; IFLA_IFNAME takes at
      // most 15 bytes, longer altnames go as IFLA_ALT_IFNAME.
      if (!name.empty()) {
        nla_put_string(msg, name.size() < IFNAMSIZ ? IFLA_IFNAME : IFLA_ALT_IFNAME, name.c_str());
      }
      return msg;
    case LinkRequest::Kind::kAddAltname:
      msg = link_request(RTM_NEWLINKPROP,
                         NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL | NLM_F_APPEND,
                         request.ifindex);
      break;
    case LinkRequest::Kind::kDelAltname:
      msg = link_request(RTM_DELLINKPROP, NLM_F_REQUEST | NLM_F_ACK, request.ifindex);
      break;
    case LinkRequest::Kind::kSetVfGuids:
      return vf_guids_message(request.ifindex, request.vf, request.node_guid, request.port_guid);
    case LinkRequest::Kind::kSetUp:
    case LinkRequest::Kind::kSetVfPort:
      throw std::invalid_argument(describe(request) + ": built by plain_link_request_bytes()");
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

// The node GUID and the port GUID in two IFLA_VF_INFO entries of one IFLA_VFINFO_LIST:
// the kernel's do_setvfinfo() sets the node GUID of an entry and returns, so a port
// GUID beside it would be ignored; do_setlink() walks every entry of the list.
nl_msg* vf_guids_message(int pf_ifindex, uint32_t vf, model::Guid node, model::Guid port) {
  auto changes = new_link();
  for (const bool is_node : {true, false}) {
    rtnl_link_vf* info = rtnl_link_vf_alloc();
    if (info == nullptr) {
      throw std::bad_alloc();
    }
    rtnl_link_vf_set_index(info, vf);
    if (is_node) {
      rtnl_link_vf_set_ib_node_guid(info, node.value());
    } else {
      rtnl_link_vf_set_ib_port_guid(info, port.value());
    }
    const int added = rtnl_link_vf_add(changes.get(), info);
    rtnl_link_vf_put(info);
    if (added < 0) {
      throw std::runtime_error("libnl could not add VF info to a link change");
    }
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
  if (exchange(socket_->sk, link_message({LinkRequest::Kind::kGet, ifindex}), &out) != 0 ||
      out.empty()) {
    return std::nullopt;
  }
  return out.front();
}

std::optional<Link> NetlinkLinks::by_name(const std::string& name) {
  std::vector<Link> out;
  if (exchange(socket_->sk, link_message({LinkRequest::Kind::kByName, 0, name}), &out) != 0 ||
      out.empty()) {
    return std::nullopt;  // ENODEV: nobody has it
  }
  return out.front();
}

int NetlinkLinks::rename(int ifindex, const std::string& name) {
  return exchange(socket_->sk, link_message({LinkRequest::Kind::kSet, ifindex, name}));
}

int NetlinkLinks::set_mtu(int ifindex, uint32_t mtu) {
  return exchange(socket_->sk, link_message({LinkRequest::Kind::kSet, ifindex, {}, mtu}));
}

int NetlinkLinks::rename_and_set_mtu(int ifindex, const std::string& name, uint32_t mtu) {
  return exchange(socket_->sk, link_message({LinkRequest::Kind::kSet, ifindex, name, mtu}));
}

int NetlinkLinks::add_altname(int ifindex, const std::string& name) {
  return exchange(socket_->sk, link_message({LinkRequest::Kind::kAddAltname, ifindex, name}));
}

int NetlinkLinks::del_altname(int ifindex, const std::string& name) {
  return exchange(socket_->sk, link_message({LinkRequest::Kind::kDelAltname, ifindex, name}));
}

int NetlinkLinks::set_vf_guids(int pf_ifindex, uint32_t vf, model::Guid node, model::Guid port) {
  return exchange(socket_->sk, vf_guids_message(pf_ifindex, vf, node, port));
}

namespace {

std::vector<uint8_t> bytes_of(nl_msg* msg) {
  const nlmsghdr* h = nlmsg_hdr(msg);
  const auto* bytes = reinterpret_cast<const uint8_t*>(h);  // NOLINT: raw message bytes
  std::vector<uint8_t> out(bytes, bytes + h->nlmsg_len);
  nlmsg_free(msg);
  return out;
}

}  // namespace

std::vector<uint8_t> link_request_bytes(const LinkRequest& request) {
  if (auto plain = plain_link_request_bytes(request)) {
    return std::move(*plain);
  }
  return bytes_of(link_message(request));
}

std::vector<uint8_t> libnl_link_request_bytes(const LinkRequest& request) {
  return bytes_of(link_message(request));
}

std::vector<uint8_t> build_vf_guids_request(int pf_ifindex, uint32_t vf, model::Guid node,
                                            model::Guid port) {
  return bytes_of(vf_guids_message(pf_ifindex, vf, node, port));
}

// A link event monitor's socket, and the buffer its events are read into.
struct LinkMonitor::Socket {
  nl_sock* sk = nullptr;
  ReadBuffer events;
};

namespace {

// One read of events: a datagram holds one event (a few KiB with its stats).
constexpr std::size_t kEventRead = std::size_t{64} * 1024;

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
  nl_socket_set_nonblocking(socket_->sk);
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
  // Read as they come, into one buffer: events are only listened to, never answers to
  // a request, so libnl's per-message copies and callbacks have nothing to add.
  auto& buffer = socket_->events;
  buffer.grow(kEventRead);
  for (;;) {
    // With MSG_TRUNC the length is the event's own, even when it did not fit.
    const ssize_t n = recv(fd(), buffer.data(), buffer.size(), MSG_DONTWAIT | MSG_TRUNC);
    if (n > static_cast<ssize_t>(buffer.size())) {
      *overflowed = true;  // an event cut short is an event lost; the next one fits
      buffer.grow(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0) {
      if (errno == ENOBUFS) {
        *overflowed = true;  // events were dropped
        continue;
      }
      if (errno == EINTR) {
        continue;
      }
      break;  // EAGAIN: nothing more waits
    }
    if (n == 0) {
      break;
    }
    auto len = static_cast<int>(n);
    // NOLINTNEXTLINE(*-reinterpret-cast): the kernel's layout
    for (auto* h = reinterpret_cast<const nlmsghdr*>(buffer.data()); NLMSG_OK(h, len);
         h = NLMSG_NEXT(h, len)) {  // NOLINT: the kernel's macros
      // NOLINTNEXTLINE(*-reinterpret-cast): the message's bytes
      const std::span bytes(reinterpret_cast<const uint8_t*>(h), h->nlmsg_len);
      if (auto m = parse_link_message(bytes)) {
        // Only a link's own messages say its altnames (a bridge port's have none).
        auto altnames =
            m->family == AF_UNSPEC ? std::optional(std::move(m->link.altnames)) : std::nullopt;
        out.push_back({m->removed, m->link.ifindex, std::move(m->link.name), m->link.mtu,
                       std::move(altnames)});
      }
    }
  }
  return out;
}

}  // namespace vfready::host
