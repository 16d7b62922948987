// SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "vfready/model/node_publish.hpp"

using namespace vfready::model;
using testing::HasSubstr;
using testing::Not;

namespace {

// Two PFs of 2 VFs: the first ready (its netdev renamed by hand since), the second failed
// with a zero-GUID VF, a third missing (nothing read of it).
DaemonStatus degraded_node() {
  DaemonStatus s;
  s.version = "0.1.0";
  s.state = DaemonState::kDegraded;
  s.node_ready = true;
  s.bringup_ms = 1500;
  s.drift_events = 3;
  for (const char* pci : {"0000:18:00.0", "0000:40:00.0"}) {
    PfStatus pf;
    pf.pci = PciAddress::parse(pci).value();
    pf.identity.vfs_configured = 2;
    for (uint16_t i = 0; i < 2; ++i) {
      VfStatus vf;
      vf.index = i;
      vf.guid = vfready::model::Guid{0x0200000000000001ULL + i};
      pf.vfs.push_back(vf);
    }
    s.pfs.push_back(pf);
  }
  s.pfs[0].name = "handmade";
  s.pfs[0].identity.configured_name = "ibs0";
  s.pfs[0].state = PfState::kReady;
  s.pfs[0].port_state = "4: ACTIVE";
  s.pfs[1].identity.configured_name = "ib\"s1";
  s.pfs[1].state = PfState::kFailed;
  s.pfs[1].port_state = "1: DOWN";
  s.pfs[1].problems.push_back(problem(EventKind::kPortNotActive, "port DOWN", "0000:40:00.0"));
  s.pfs[1].vfs[1].guid = vfready::model::Guid{0};
  s.pfs[1].vfs[1].problems.push_back(problem(EventKind::kGuidWrong, "zero", "0000:40:00.0"));
  PfStatus missing;
  missing.pci = PciAddress::parse("0000:4f:00.0").value();
  missing.state = PfState::kFailed;
  missing.identity.vfs_configured = 2;
  s.pfs.push_back(missing);
  return s;
}

}  // namespace

TEST(NodeFeatureLabels, SayReadyDegradedAndCounts) {
  const auto text = node_feature_labels(degraded_node());
  EXPECT_THAT(text, HasSubstr("\nvfready.io/ready=true\n"));
  EXPECT_THAT(text, HasSubstr("\nvfready.io/degraded=true\n"));
  EXPECT_THAT(text, HasSubstr("\nvfready.io/state=degraded\n"));
  EXPECT_THAT(text, HasSubstr("\nvfready.io/pfs=3\n"));
  EXPECT_THAT(text, HasSubstr("\nvfready.io/pfs-ready=1\n"));
  // The failed PF's VF that passed its own checks is not one a pod can use.
  EXPECT_THAT(text, HasSubstr("\nvfready.io/vfs=2\n"));
  EXPECT_THAT(text, HasSubstr("\nvfready.io/vfs-configured=6\n"));
}

// The package's configuration selects no PF: READY, but no node for VF pods.
TEST(NodeFeatureLabels, SayNotReadyForANodeWithoutPfs) {
  DaemonStatus s;
  s.state = DaemonState::kReady;
  s.node_ready = true;
  EXPECT_THAT(node_feature_labels(s), HasSubstr("\nvfready.io/ready=false\n"));
  EXPECT_THAT(node_feature_labels(degraded_node()), HasSubstr("\nvfready.io/ready=true\n"));
}

TEST(PrometheusMetrics, GiveEachPfsStateVfsAndProblemsWithEscapedLabels) {
  const auto text = prometheus_metrics(degraded_node(), 1'796'147'305'000);
  EXPECT_THAT(text, HasSubstr("# TYPE vfready_node_ready gauge\nvfready_node_ready 1\n"));
  // Labelled with its configured name, not the one its netdev has now.
  EXPECT_THAT(text, HasSubstr("vfready_pf_ready{pf=\"0000:18:00.0\",name=\"ibs0\"} 1\n"));
  // Escaped.
  EXPECT_THAT(text, HasSubstr("vfready_pf_ready{pf=\"0000:40:00.0\",name=\"ib\\\"s1\"} 0\n"));
  EXPECT_THAT(
      text,
      HasSubstr("vfready_pf_state{pf=\"0000:40:00.0\",name=\"ib\\\"s1\",state=\"failed\"} 1"));
  EXPECT_THAT(
      text, HasSubstr("vfready_pf_state{pf=\"0000:40:00.0\",name=\"ib\\\"s1\",state=\"ready\"} 0"));
  EXPECT_THAT(text,
              HasSubstr("vfready_vfs{pf=\"0000:40:00.0\",name=\"ib\\\"s1\",state=\"failed\"} 1"));
  EXPECT_THAT(text, HasSubstr("vfready_vfs_zero_guid{pf=\"0000:40:00.0\",name=\"ib\\\"s1\"} 1"));
  EXPECT_THAT(text, HasSubstr("vfready_port_active{pf=\"0000:18:00.0\",name=\"ibs0\"} 1"));
  EXPECT_THAT(text, HasSubstr("vfready_port_active{pf=\"0000:40:00.0\",name=\"ib\\\"s1\"} 0"));
  // Without a configured name: its PCI address; its port never read: no sample.
  EXPECT_THAT(text, HasSubstr("vfready_pf_ready{pf=\"0000:4f:00.0\",name=\"0000:4f:00.0\"} 0\n"));
  EXPECT_THAT(text, Not(HasSubstr("vfready_port_active{pf=\"0000:4f:00.0\"")));
  EXPECT_THAT(text, Not(HasSubstr("handmade")));
  EXPECT_THAT(text, HasSubstr("vfready_problems{code=\"port-not-active\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("vfready_problems{code=\"guid-wrong\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("vfready_bringup_seconds 1.5\n"));
  EXPECT_THAT(
      text,
      HasSubstr("# TYPE vfready_drift_repairs_total counter\nvfready_drift_repairs_total 3\n"));
  EXPECT_THAT(text, HasSubstr("vfready_status_timestamp_seconds 1796147305\n"));
  EXPECT_THAT(text, Not(HasSubstr("e+")));
}

TEST(PrometheusLabelValues, EscapeBackslashQuoteAndNewline) {
  EXPECT_EQ(prometheus_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
}
