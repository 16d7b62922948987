// SPDX-License-Identifier: Apache-2.0
// Step "validate" of an Ethernet PF: each VF's RDMA device (RoCE) and its port, read back.
#include <gmock/gmock.h>

#include "pipeline_fixture.hpp"
#include "vfready/host/errno_name.hpp"

namespace {

using testing::ElementsAre;
using testing::HasSubstr;
using testing::IsEmpty;
using vfready::host::VfRdmaRead;
using vfready::model::EventKind;
using vfready::model::texts;
using vfready::pipeline::check_vf_rdma;
using vfready::pipeline::drive;
using vfready::pipeline::VfWork;
using vfready::testing::kPf;

// A ConnectX PF in Ethernet mode (RoCE): mlx5_ib made it RDMA device mlx5_0.
const std::string kRoce = R"({"pfs": [{"select": {"pci": "0000:18:00.0"}, "vfs": 3,
  "link_layer": "Ethernet",
  "mac": {"scheme": "pool", "first": "02:00:00:00:01:00", "last": "02:00:00:00:01:ff"}}]})";

class AVfRdmaCheck : public vfready::testing::PipelineTest {
 protected:
  vfready::pipeline::PfRun& roce_run() {
    host.pf(kPf).info.ports.front().link_layer = "Ethernet";
    auto& r = run(kRoce);
    for (uint16_t i = 0; i < 3; ++i) {
      VfWork vs;
      vs.index = i;
      vs.pci = r.info.vf_address(i).value();
      vs.ifindex = 100 + i;
      vs.name = "ens0v" + std::to_string(i);
      r.vfs.push_back(vs);
    }
    return r;
  }
  // What the pass reports of VF `index`'s RDMA device: none when it has none.
  static std::optional<vfready::model::VfRdmaStatus> reported(const vfready::pipeline::PfRun& r,
                                                              uint16_t index) {
    for (const auto& v : r.status.vf_rdma) {
      if (v.index == index) {
        return v;
      }
    }
    return std::nullopt;
  }
  void rdma(uint16_t vf, VfRdmaRead read) {
    host.vf_rdma[std::string(kPf) + "/" + std::to_string(vf)] = read;
  }
};

TEST_F(AVfRdmaCheck, CallsAVfWithoutOneNotReadyWhereThePfsDriverMadeThePfOne) {
  auto& r = roce_run();
  r.vfs[2].in_use.why = vfready::model::VfUse::Why::kOtherDriver;  // vfio-pci's: not asked
  rdma(0, {.device = "mlx5_3", .link_layer = "Ethernet", .state = "1: DOWN"});
  ASSERT_TRUE(drive(check_vf_rdma(r)).is_done());
  ASSERT_TRUE(reported(r, 0));
  EXPECT_EQ(reported(r, 0)->device, "mlx5_3");
  EXPECT_EQ(reported(r, 0)->port_state, "1: DOWN");  // reported, not required: netdev down
  EXPECT_FALSE(reported(r, 1));
  EXPECT_THAT(r.vfs[0].problems, IsEmpty());
  ASSERT_EQ(r.vfs[1].problems.size(), 1U);
  EXPECT_EQ(r.vfs[1].problems[0].kind, EventKind::kVfNoRdma);
  EXPECT_THAT(r.vfs[1].problems[0].text,
              HasSubstr("(ens0v1) has no RDMA device, where its PF has mlx5_0"));
  ASSERT_EQ(host.rdma_reads.size(), 2U);
  EXPECT_EQ(host.rdma_reads[1].netdev, "ens0v1");
}

TEST_F(AVfRdmaCheck, NeedsNoVfRdmaDeviceWhereThePfsIsASoftwareOne) {
  auto& r = roce_run();
  r.info.rdma_over_netdev = true;  // rdma link add rxe0 type rxe netdev <PF>
  r.info.ib_device = "rxe0";
  rdma(1, {.device = "rxe1", .over_netdev = true, .link_layer = "Ethernet", .state = "4: ACTIVE"});
  ASSERT_TRUE(drive(check_vf_rdma(r)).is_done());
  EXPECT_THAT(r.vfs[0].problems, IsEmpty());
  EXPECT_FALSE(reported(r, 0));
  ASSERT_TRUE(reported(r, 1));
  EXPECT_EQ(reported(r, 1)->device, "rxe1");
  EXPECT_EQ(reported(r, 1)->port_state, "4: ACTIVE");
}

TEST_F(AVfRdmaCheck, CallsAVfWhosePortCannotBeReadNotReady) {
  auto& r = roce_run();
  for (uint16_t i = 0; i < 3; ++i) {
    rdma(i, {.device = "mlx5_" + std::to_string(3 + i), .err = i == 1 ? EIO : 0});
  }
  ASSERT_TRUE(drive(check_vf_rdma(r)).is_done());
  EXPECT_THAT(texts(r.vfs[1].problems),
              ElementsAre("the state of port 1 of RDMA device mlx5_4 of VF " + r.vfs[1].pci.str() +
                          " (ens0v1) cannot be read: " + vfready::host::errno_name(EIO)));
  EXPECT_THAT(r.vfs[0].problems, IsEmpty());
  EXPECT_THAT(r.vfs[2].problems, IsEmpty());
}

TEST_F(AVfRdmaCheck, SaysAReadNoHelperMadeIsNotTheDriversAnswer) {
  auto& r = roce_run();
  rdma(0, {.device = "mlx5_3", .err = EMFILE, .unasked = true});
  rdma(1, {.device = "mlx5_4"});
  rdma(2, {.device = "mlx5_5"});
  ASSERT_TRUE(drive(check_vf_rdma(r)).is_done());
  ASSERT_EQ(r.vfs[0].problems.size(), 1U);
  EXPECT_EQ(r.vfs[0].problems[0].kind, EventKind::kHostReadFailed);
  EXPECT_THAT(r.vfs[0].problems[0].text, HasSubstr("no helper process made the read"));
}

TEST_F(AVfRdmaCheck, NeedsNoVfRdmaDeviceOfAPfOfAnotherDriver) {
  host.pf(kPf).info.driver = "bnxt_en";  // its VF driver may make none
  auto& r = roce_run();
  ASSERT_TRUE(drive(check_vf_rdma(r)).is_done());
  for (const auto& vs : r.vfs) {
    EXPECT_THAT(vs.problems, IsEmpty());
  }
}

TEST_F(AVfRdmaCheck, FailsTheStepWhenItsPfIsStuck) {
  auto& r = roce_run();
  rdma(0, {.device = "mlx5_3"});
  host.fail("numvfs", vfready::host::kStuck);  // a call into its driver that did not return
  ASSERT_EQ(host.set_num_vfs(r.target.pci, 3), vfready::host::kStuck);
  const auto result = drive(check_vf_rdma(r));
  ASSERT_TRUE(result.is_failed());
  EXPECT_EQ(result.problems.at(0).kind, EventKind::kPfStuck);
}

TEST_F(AVfRdmaCheck, ChecksNothingOfAnInfiniBandPf) {
  auto& r = run();
  r.vfs.push_back(VfWork{});
  ASSERT_TRUE(drive(check_vf_rdma(r)).is_done());
  EXPECT_THAT(host.rdma_reads, IsEmpty());
}

}  // namespace
