// SPDX-License-Identifier: Apache-2.0
#include "netdevs.hpp"

#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "errno_text.hpp"

namespace vfready::fakehost {

namespace {

std::string hex_address(const nlattr* attr) {
  std::string out;
  const auto* bytes = static_cast<const uint8_t*>(nla_data(attr));
  static constexpr char kDigits[] = "0123456789abcdef";
  for (int i = 0; i < nla_len(attr); ++i) {
    if (i != 0) {
      out += ':';
    }
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 0xf];
  }
  return out;
}

// A link message as a LinkEvent; false for other messages.
bool parse_link(nl_msg* msg, LinkEvent* out) {
  nlmsghdr* h = nlmsg_hdr(msg);
  if (h->nlmsg_type != RTM_NEWLINK && h->nlmsg_type != RTM_DELLINK) {
    return false;
  }
  const auto* ifi = static_cast<const ifinfomsg*>(nlmsg_data(h));
  nlattr* tb[IFLA_MAX + 1] = {};
  if (nlmsg_parse(h, sizeof(ifinfomsg), tb, IFLA_MAX, nullptr) < 0) {
    return false;
  }
  out->removed = h->nlmsg_type == RTM_DELLINK;
  out->ifindex = ifi->ifi_index;
  out->name = tb[IFLA_IFNAME] != nullptr ? nla_get_string(tb[IFLA_IFNAME]) : "";
  out->mtu = tb[IFLA_MTU] != nullptr ? nla_get_u32(tb[IFLA_MTU]) : 0;
  out->address = tb[IFLA_ADDRESS] != nullptr ? hex_address(tb[IFLA_ADDRESS]) : "";
  out->new_netnsid = tb[IFLA_NEW_NETNSID] != nullptr ? nla_get_s32(tb[IFLA_NEW_NETNSID]) : -1;
  out->new_ifindex = tb[IFLA_NEW_IFINDEX] != nullptr ? nla_get_s32(tb[IFLA_NEW_IFINDEX]) : 0;
  return true;
}

// A link request of `type` for `ifindex` in the namespace known here as `netnsid`.
nl_msg* request_elsewhere(int type, int flags, int netnsid, int ifindex) {
  nl_msg* msg = nlmsg_alloc_simple(type, flags);
  ifinfomsg ifi{};
  ifi.ifi_index = ifindex;
  if (msg != nullptr && (nlmsg_append(msg, &ifi, sizeof ifi, NLMSG_ALIGNTO) < 0 ||
                         nla_put_s32(msg, IFLA_TARGET_NETNSID, netnsid) < 0)) {
    nlmsg_free(msg);
    return nullptr;
  }
  return msg;
}

// The answer to a link request: the link, and its ACK (libnl asks for one).
struct LinkReply {
  std::optional<LinkEvent> link;
  bool acked = false;
};

int on_reply(nl_msg* msg, void* arg) {
  LinkEvent e;
  if (parse_link(msg, &e)) {
    static_cast<LinkReply*>(arg)->link = e;
  }
  return NL_OK;
}

int on_ack(nl_msg* /*msg*/, void* arg) {
  static_cast<LinkReply*>(arg)->acked = true;
  return NL_STOP;
}

int on_event(nl_msg* msg, void* arg) {
  LinkEvent e;
  if (parse_link(msg, &e)) {
    (*static_cast<Netdevs::Listener*>(arg))(e);
  }
  return NL_OK;
}

LinkEvent from_link(rtnl_link* link) {
  LinkEvent e;
  e.ifindex = rtnl_link_get_ifindex(link);
  const char* name = rtnl_link_get_name(link);
  e.name = name != nullptr ? name : "";
  e.mtu = rtnl_link_get_mtu(link);
  if (nl_addr* addr = rtnl_link_get_addr(link)) {
    char buf[128];
    e.address = nl_addr2str(addr, buf, sizeof buf);
  }
  return e;
}

// libnl's error codes as the errno the kernel gave (libnl keeps only its own code).
int errno_of(int nl_err) {
  switch (-nl_err) {
    case NLE_EXIST:
      return EEXIST;
    case NLE_BUSY:
      return EBUSY;
    case NLE_INVAL:
    case NLE_RANGE:
      return EINVAL;
    case NLE_NODEV:
    case NLE_OBJ_NOTFOUND:
      return ENODEV;
    case NLE_NOMEM:
      return ENOMEM;
    case NLE_OPNOTSUPP:
      return EOPNOTSUPP;
    case NLE_PERM:
      return EPERM;
    default:
      return EIO;
  }
}

nl_sock* connect_route() {
  nl_sock* sk = nl_socket_alloc();
  if (sk == nullptr || nl_connect(sk, NETLINK_ROUTE) < 0) {
    nl_socket_free(sk);
    return nullptr;
  }
  return sk;
}

}  // namespace

Netdevs::Netdevs(int netns_fd, Listener listener) : listener_(std::move(listener)) {
  // Netlink sockets act on the namespace they were opened in: open them from a thread
  // that has entered it.
  std::string error;
  std::thread([&] {
    if (setns(netns_fd, CLONE_NEWNET) != 0) {
      error = "setns: " + errno_text(errno);
      return;
    }
    request_ = connect_route();
    events_ = connect_route();
    if (request_ == nullptr || events_ == nullptr) {
      error = "cannot open rtnetlink sockets";
    }
  }).join();
  if (error.empty()) {
    nl_socket_disable_seq_check(events_);
    nl_socket_modify_cb(events_, NL_CB_VALID, NL_CB_CUSTOM, on_event, &listener_);
    // Thousands of VFs appear in bursts; a large buffer keeps events from being dropped
    // (and a drop is repaired by a full dump in resync()).
    nl_socket_set_buffer_size(events_, 8 << 20, 0);
    nl_socket_set_nonblocking(events_);
    if (nl_socket_add_membership(events_, RTNLGRP_LINK) < 0) {
      error = "cannot join RTNLGRP_LINK";
    }
  }
  stop_fd_ = eventfd(0, EFD_CLOEXEC);
  if (!error.empty() || stop_fd_ < 0) {
    nl_socket_free(request_);
    nl_socket_free(events_);
    if (stop_fd_ >= 0) {
      close(stop_fd_);
    }
    throw std::runtime_error("netdevs: " + error);
  }
  thread_ = std::thread([this] { listen_loop(); });
}

Netdevs::~Netdevs() {
  stop();
  nl_socket_free(request_);
  nl_socket_free(events_);
  close(stop_fd_);
}

void Netdevs::stop() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    if (write(stop_fd_, &one, sizeof one) < 0) {
      return;
    }
    thread_.join();
  }
}

void Netdevs::listen_loop() {
  pollfd fds[2] = {{nl_socket_get_fd(events_), POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  while (true) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) {
        continue;
      }
      return;
    }
    if ((fds[1].revents & POLLIN) != 0) {
      return;
    }
    while (true) {
      const int err = nl_recvmsgs_default(events_);
      if (err == -NLE_AGAIN || err == 0) {
        break;
      }
      if (err == -NLE_NOMEM) {  // ENOBUFS: events were lost; read the whole state again
        resync();
        continue;
      }
      break;
    }
  }
}

void Netdevs::resync() {
  nl_cache* cache = nullptr;
  {
    std::lock_guard lock(request_mu_);
    if (rtnl_link_alloc_cache(request_, AF_UNSPEC, &cache) < 0) {
      return;
    }
  }
  for (nl_object* obj = nl_cache_get_first(cache); obj != nullptr; obj = nl_cache_get_next(obj)) {
    listener_(from_link(reinterpret_cast<rtnl_link*>(obj)));  // NOLINT: libnl's object model
  }
  nl_cache_free(cache);
}

Result<int> Netdevs::create(const std::string& name, uint32_t mtu) {
  // A template is filled in by a rename right after creation (the kernel allocates the
  // number there as in register_netdev), so the link can be looked up by a name of its
  // own first. Nobody follows the temporary name: the fake kernel takes the netdev as
  // its function's only after create returns.
  if (name.find('%') != std::string::npos) {
    static std::atomic<unsigned> next{0};
    auto made = create("fhnew" + std::to_string(next++), mtu);
    if (!made) {
      return made;
    }
    if (const int err = rename(made.value(), name); err != 0) {
      remove(made.value());
      return Error{"cannot name netdev " + name + ": " + errno_text(err)};
    }
    return made;
  }
  std::lock_guard lock(request_mu_);
  rtnl_link* link = rtnl_link_alloc();
  rtnl_link_set_name(link, name.c_str());
  rtnl_link_set_mtu(link, mtu);
  int err = rtnl_link_set_type(link, "ifb");
  if (err >= 0) {
    err = rtnl_link_add(request_, link, NLM_F_CREATE | NLM_F_EXCL);
  }
  rtnl_link_put(link);
  if (err < 0) {
    return Error{"cannot create netdev " + name + ": " + nl_geterror(err)};
  }
  rtnl_link* created = nullptr;
  err = rtnl_link_get_kernel(request_, 0, name.c_str(), &created);
  if (err < 0 || created == nullptr) {
    return Error{"netdev " + name + " vanished after creation: " + nl_geterror(err)};
  }
  const int ifindex = rtnl_link_get_ifindex(created);
  rtnl_link_put(created);
  return ifindex;
}

int Netdevs::rename(int ifindex, const std::string& name) {
  std::lock_guard lock(request_mu_);
  rtnl_link* orig = rtnl_link_alloc();
  rtnl_link* change = rtnl_link_alloc();
  rtnl_link_set_ifindex(orig, ifindex);
  rtnl_link_set_name(change, name.c_str());
  const int err = rtnl_link_change(request_, orig, change, 0);
  rtnl_link_put(orig);
  rtnl_link_put(change);
  return err < 0 ? errno_of(err) : 0;
}

int Netdevs::add_altname(int ifindex, const std::string& name) {
  // libnl 3.7 has no altname call: RTM_NEWLINKPROP with IFLA_PROP_LIST/IFLA_ALT_IFNAME,
  // as `ip link property add` sends it.
  std::lock_guard lock(request_mu_);
  nl_msg* msg = nlmsg_alloc_simple(
      RTM_NEWLINKPROP, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL | NLM_F_APPEND);
  if (msg == nullptr) {
    return ENOMEM;
  }
  ifinfomsg ifi{};
  ifi.ifi_index = ifindex;
  int err = nlmsg_append(msg, &ifi, sizeof ifi, NLMSG_ALIGNTO);
  if (err >= 0) {
    nlattr* list = nla_nest_start(msg, IFLA_PROP_LIST);
    err = list == nullptr ? -NLE_NOMEM : nla_put_string(msg, IFLA_ALT_IFNAME, name.c_str());
    if (err >= 0) {
      nla_nest_end(msg, list);
      err = nl_send_sync(request_, msg);  // frees msg
      msg = nullptr;
    }
  }
  nlmsg_free(msg);
  return err < 0 ? errno_of(err) : 0;
}

bool Netdevs::remove(int ifindex) {
  std::lock_guard lock(request_mu_);
  rtnl_link* link = rtnl_link_alloc();
  rtnl_link_set_ifindex(link, ifindex);
  const int err = rtnl_link_delete(request_, link);
  rtnl_link_put(link);
  return err >= 0;
}

bool Netdevs::remove_elsewhere(int netnsid, int ifindex, const std::string& address) {
  std::lock_guard lock(request_mu_);
  // Still the same netdev: the address it left with (it may have moved on, and another
  // link taken its ifindex there).
  LinkReply there;
  nl_msg* get = request_elsewhere(RTM_GETLINK, NLM_F_REQUEST, netnsid, ifindex);
  if (get == nullptr) {
    return false;
  }
  int err = nl_send_auto(request_, get);
  nlmsg_free(get);
  if (err >= 0) {
    // Read to the ACK, so that nothing of this answer is left for the next request.
    nl_cb* base = nl_socket_get_cb(request_);  // a reference of its own
    nl_cb* cb = nl_cb_clone(base);
    nl_cb_put(base);
    nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_reply, &there);
    nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, &there);
    while (err >= 0 && !there.acked) {
      err = nl_recvmsgs(request_, cb);
    }
    nl_cb_put(cb);
  }
  if (err < 0 || !there.link || there.link->address != address) {
    return false;
  }
  nl_msg* del = request_elsewhere(RTM_DELLINK, NLM_F_REQUEST | NLM_F_ACK, netnsid, ifindex);
  return del != nullptr && nl_send_sync(request_, del) >= 0;  // frees del
}

bool Netdevs::remove_if_address(int ifindex, const std::string& address) {
  const auto now = get(ifindex);
  return now && now.value().address == address && remove(ifindex);
}

Result<LinkEvent> Netdevs::get(int ifindex) {
  std::lock_guard lock(request_mu_);
  rtnl_link* link = nullptr;
  if (rtnl_link_get_kernel(request_, ifindex, nullptr, &link) < 0 || link == nullptr) {
    return Error{"no link with ifindex " + std::to_string(ifindex)};
  }
  auto event = from_link(link);
  rtnl_link_put(link);
  return event;
}

}  // namespace vfready::fakehost
