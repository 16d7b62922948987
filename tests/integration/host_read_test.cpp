// SPDX-License-Identifier: Apache-2.0
// The planner's read of the host on the fake host: a function no entry of the
// configuration names is read only as far as a plan takes it, and the plan is the one a
// read of every function whole gives.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "daemon_run.hpp"
#include "fake_host.hpp"
#include "root_only.hpp"
#include "vfready/host/device_calls.hpp"
#include "vfready/host/host_reader.hpp"
#include "vfready/host/sysfs.hpp"
#include "vfready/model/plan.hpp"

using namespace vfready;
using namespace vfready::testing;

namespace {

const model::PfInfo* function(const model::HostInfo& host, const char* pci) {
  return host.find(model::PciAddress::parse(pci).value());
}

// `value` written to `file` under the fake host's sysfs, as one write(2).
bool write_sys(const FakeHost& host, const std::string& file, const std::string& value) {
  const int fd = ::open((host.root() + "/sys/" + file).c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    return false;
  }
  const bool ok = ::write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
  ::close(fd);
  return ok;
}

}  // namespace

TEST(AHostRead, TakesOfAFunctionNoEntryNamesOnlyWhatAPlanTakesAndPlansTheSame) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  // An Ethernet function vfready does not manage, with VFs of its own (bound: netdevs).
  ASSERT_TRUE(write_sys(host, "bus/pci/devices/0000:29:00.0/sriov_numvfs", "2"));
  auto config = model::parse_config({{"vfready.json", read_file(repo_config())}});
  ASSERT_TRUE(config) << config.error().message;
  const auto selected = model::selected_by_address(config.value());
  ASSERT_TRUE(selected.has_value());
  ASSERT_FALSE(selected->contains(model::PciAddress::parse("0000:29:00.0").value()));

  host::RootedSysfs sysfs(host.root() + "/sys", std::make_shared<host::DeviceCalls>());
  const auto whole = host::read_host(sysfs, {host.root() + "/proc", "/dev/null"});
  const auto light = host::read_host(sysfs, {host.root() + "/proc", "/dev/null"}, &*selected);

  ASSERT_EQ(light.functions.size(), whole.functions.size());
  const auto* unmanaged = function(light, "0000:29:00.0");
  const auto* read_whole = function(whole, "0000:29:00.0");
  ASSERT_NE(unmanaged, nullptr);
  ASSERT_NE(read_whole, nullptr);
  // What a plan takes of it: its device, its netdev, its VFs and theirs.
  EXPECT_EQ(unmanaged->device, read_whole->device);
  EXPECT_EQ(unmanaged->netdev, read_whole->netdev);
  ASSERT_EQ(unmanaged->vfs.size(), 2U);
  ASSERT_EQ(read_whole->vfs.size(), 2U);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(unmanaged->vfs[i].pci, read_whole->vfs[i].pci);
    EXPECT_EQ(unmanaged->vfs[i].netdev, read_whole->vfs[i].netdev);
    EXPECT_TRUE(unmanaged->vfs[i].netdev.has_value());
  }
  // Not what only a managed PF needs.
  EXPECT_FALSE(unmanaged->firmware_text.has_value());
  EXPECT_FALSE(unmanaged->node_guid.has_value());
  EXPECT_TRUE(unmanaged->ports.empty());
  EXPECT_TRUE(read_whole->firmware_text.has_value());
  // A PF the configuration names is read whole.
  const auto* managed = function(light, "0000:18:00.0");
  ASSERT_NE(managed, nullptr);
  EXPECT_EQ(managed->firmware_text, function(whole, "0000:18:00.0")->firmware_text);
  EXPECT_EQ(managed->node_guid, function(whole, "0000:18:00.0")->node_guid);

  const auto from_light = model::make_plan(config.value(), light);
  const auto from_whole = model::make_plan(config.value(), whole);
  ASSERT_TRUE(from_light) << from_light.error().message;
  ASSERT_TRUE(from_whole) << from_whole.error().message;
  ASSERT_EQ(from_light->pfs.size(), from_whole->pfs.size());
  for (std::size_t p = 0; p < from_whole->pfs.size(); ++p) {
    const auto& a = from_light->pfs[p];
    const auto& b = from_whole->pfs[p];
    EXPECT_EQ(a.pci, b.pci);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.problems.size(), b.problems.size());
    ASSERT_EQ(a.vf.size(), b.vf.size());
    for (std::size_t v = 0; v < b.vf.size(); ++v) {
      EXPECT_EQ(a.vf[v].name, b.vf[v].name);
      EXPECT_EQ(a.vf[v].guid, b.vf[v].guid);
      EXPECT_EQ(a.vf[v].pci, b.vf[v].pci);
    }
  }
}
