// SPDX-License-Identifier: Apache-2.0
// The differential test of the fake host: the series of sysfs writes of
// tests/vm/sysfs-answers, run here on the fake host's mlx5 PF, answers line for line as
// the real kernel did in the VM on an igb PF (tests/vm/sysfs-answers.kernel, which .ci/vm
// checks against the VM's kernel on every run). docs/fake-host.md says which rows that
// confirms.
#include <gtest/gtest.h>

#include "fake_host.hpp"
#include "process.hpp"
#include "root_only.hpp"

using namespace vfready::testing;

TEST(AFakeHost, AnswersTheSysfsWritesOfTheDifferentialAsTheVmsKernelDid) {
  VFREADY_REQUIRE_ROOT();
  FakeHost host(TopologyBuilder::reference().probe_ms(1));
  const std::string script = VFREADY_SOURCE_DIR "/tests/vm/sysfs-answers";
  const auto r = sh("python3 " + script + " " + host.root() + " 0000:18:00.0 mlx5_core", 120s);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, read_file(script + ".kernel"));
}
