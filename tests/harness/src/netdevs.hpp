// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "vfready/model/result.hpp"

struct nl_sock;

// Real kernel netdevs (ifb) in one network namespace, made and removed over rtnetlink,
// and the namespace's link events (RTM_NEWLINK/RTM_DELLINK) delivered to a listener as
// they happen. The only file of the fake host that includes libnl.
namespace vfready::fakehost {

struct LinkEvent {
  bool removed = false;
  int ifindex = 0;
  std::string name;
  uint32_t mtu = 0;
  std::string address;  // "aa:bb:..."
  // An RTM_DELLINK of a move to another namespace says where it went, as seen from here
  // (IFLA_NEW_NETNSID, IFLA_NEW_IFINDEX: dev_change_net_namespace(), net/core/dev.c).
  int new_netnsid = -1;
  int new_ifindex = 0;
};

class Netdevs {
 public:
  using Listener = std::function<void(const LinkEvent&)>;

  // Opens the sockets inside the namespace `netns_fd` refers to and starts listening;
  // throws std::runtime_error on failure. Events before start_listening() are queued.
  Netdevs(int netns_fd, Listener listener);
  ~Netdevs();
  Netdevs(const Netdevs&) = delete;
  Netdevs& operator=(const Netdevs&) = delete;

  // Creates an ifb netdev; its ifindex, or why not (e.g. the name is taken). A name with
  // "%d" is a template the kernel fills with the first free number, as a driver's
  // register_netdev does for "ib%d".
  Result<int> create(const std::string& name, uint32_t mtu);
  // Renames a netdev (a template name as in create); 0 or the errno.
  int rename(int ifindex, const std::string& name);
  // Gives a netdev an alternative name (RTM_NEWLINKPROP); 0 or the errno.
  int add_altname(int ifindex, const std::string& name);
  // Removes a netdev; false when it was already gone.
  bool remove(int ifindex);
  // Removes the netdev at `ifindex` of the namespace this one knows as `netnsid`
  // (IFLA_TARGET_NETNSID) when its address is still `address`; false when it is not there.
  bool remove_elsewhere(int netnsid, int ifindex, const std::string& address);
  // Removes the netdev at `ifindex` here when its address is `address`.
  bool remove_if_address(int ifindex, const std::string& address);
  // The current state of a link, as the kernel reports it now.
  Result<LinkEvent> get(int ifindex);

  // Stops the listener thread. Idempotent.
  void stop();

 private:
  void listen_loop();
  void resync();

  Listener listener_;
  std::mutex request_mu_;
  nl_sock* request_ = nullptr;
  nl_sock* events_ = nullptr;
  int stop_fd_ = -1;
  std::thread thread_;
};

}  // namespace vfready::fakehost
