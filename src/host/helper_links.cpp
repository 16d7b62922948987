// SPDX-License-Identifier: Apache-2.0
#include "vfready/host/helper_links.hpp"

#include <cerrno>
#include <utility>
#include <vector>

#include "vfready/host/kernel_calls.hpp"
#include "vfready/host/link_message.hpp"
#include "vfready/host/started_on_device.hpp"

namespace vfready::host {

namespace {

DeviceOp netlink_op(const LinkRequest& request) {
  const auto bytes = link_request_bytes(request);
  return {DeviceOp::Kind::kNetlink, describe(request), std::string(bytes.begin(), bytes.end())};
}

// The answer a helper gave: its errno, and the link of a lookup.
LinkAnswer answer_of(const std::vector<DeviceOpResult>& got) {
  if (got.empty()) {
    return {EIO};
  }
  LinkAnswer out{got.back().err};
  if (out.err == 0 && !got.back().text.empty()) {
    const auto& text = got.back().text;
    // NOLINTNEXTLINE(*-reinterpret-cast): the message's bytes
    const std::span bytes(reinterpret_cast<const uint8_t*>(text.data()), text.size());
    if (auto m = parse_link_message(bytes); m && !m->removed) {
      out.link = std::move(m->link);
    } else {
      out.err = EPROTO;
    }
  }
  return out;
}

}  // namespace

std::unique_ptr<StartedCall<LinkAnswer>> HelperLinks::start(const LinkRequest& request) {
  count(KernelCall::kNetlinkRequest);
  const DeviceOp op = netlink_op(request);
  return std::make_unique<StartedOnDevice<LinkAnswer>>(
      [calls = calls_](DeviceCalls::Pending call) { return calls->finish(std::move(call)); },
      calls_->start(kLinksKey, {&op, 1}, deadline_), answer_of);
}

}  // namespace vfready::host
