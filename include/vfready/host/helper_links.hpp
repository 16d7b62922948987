// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "vfready/host/device_calls.hpp"
#include "vfready/host/links.hpp"

// Links whose requests DeviceCalls' helpers make, each under a deadline: a pass's. The
// kernel serves every link request (a lookup as well as a rename: rtnl_getlink and
// rtnl_setlink are registered without RTNL_FLAG_DOIT_UNLOCKED in net/core/rtnetlink.c)
// under rtnl_lock, which a driver may hold while it waits on its device; no thread of
// the daemon waits there (the drift watch asks only a link's name, by SIOCGIFNAME:
// link_name.hpp). rtnl_lock is one lock for every link: all requests go
// under one key (kLinksKey, links.hpp), so that once one has outlived its deadline the
// later ones answer kStuck at once, until it returns (DeviceCalls::collect() says when).
namespace vfready::host {

class HelperLinks final : public Links {
 public:
  HelperLinks(std::shared_ptr<DeviceCalls> calls, std::chrono::milliseconds deadline)
      : calls_(std::move(calls)), deadline_(deadline) {}

  std::unique_ptr<StartedCall<LinkAnswer>> start(const LinkRequest& request) override;

 private:
  std::shared_ptr<DeviceCalls> calls_;
  std::chrono::milliseconds deadline_;
};

}  // namespace vfready::host
