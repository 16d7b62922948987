// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "memory_host.hpp"
#include "skipped_time.hpp"
#include "vfready/model/config.hpp"
#include "vfready/model/plan.hpp"
#include "vfready/pipeline/pf_bringup.hpp"
#include "vfready/pipeline/steps.hpp"

// A pipeline over an in-memory host: one InfiniBand PF (0000:18:00.0, ibp24s0) that
// gets 4 VFs named ibs0v<N>, with short bounds so that a wait that fails ends soon.
namespace vfready::testing {

inline const char* const kPf = "0000:18:00.0";
inline vfready::model::PciAddress pci(const char* text) {
  return vfready::model::PciAddress::parse(text).value();
}

inline std::string pipeline_config(const std::string& extra = "") {
  return R"({"pfs": [{"select": {"pci": ["0000:18:00.0"]}, "vfs": 4,
    "pf_name": "ibs{pf_index}", "vf_name": "ibs{pf_index}v{vf}",
    "vf_altnames": ["ib-{vf_pci}"], "mtu": 4092)" +
         extra + R"(}],
    "timeouts": {"udev_ms": 50, "port_active_ms": 300}})";
}

class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override { host.add_pf(kPf, "ibp24s0"); }

  // The config, parsed; the plan for the host as it is now.
  model::PfTarget target(const std::string& json = pipeline_config()) {
    auto c = model::parse_config({{"vfready.json", json}});
    EXPECT_TRUE(c) << c.error().message;
    config = c.value();
    info = host.host_info();
    auto plan = model::make_plan(config, info);
    EXPECT_TRUE(plan) << plan.error().message;
    return plan->pfs.at(0);
  }

  // One whole pass over the PF, as a worker runs it.
  model::PfStatus bring_up(const std::string& json = pipeline_config()) {
    planned = target(json);
    return bring_up_planned();
  }
  // The pass over the plan made before (`planned`): the host may have changed since.
  model::PfStatus bring_up_planned() {
    names.configure({kPf});
    return pipeline::drive(pipeline::pf_pass(planned, config, table, info, os, names,
                                             [&](const char* s) { steps.emplace_back(s); }));
  }

  // The same, its waits on skipped time (drive_on_skipped_time): bounds of minutes come
  // at once.
  model::PfStatus bring_up_on_skipped_time(const std::string& json) {
    planned = target(json);
    names.configure({kPf});
    return drive_on_skipped_time(
        pipeline::pf_pass(planned, config, table, info, os, names, record_step));
  }
  pipeline::ProgressFn record_step = [this](const char* s) { steps.emplace_back(s); };

  // A run of single steps: the PF as the pass found it.
  pipeline::PfRun& run(const std::string& json = pipeline_config()) {
    planned = target(json);
    names.configure({kPf});
    run_ = std::make_unique<pipeline::PfRun>(pipeline::PfRun{planned, config, os, names});
    run_->info = *host.read_pf(planned.pci, true);
    run_->status.pci = planned.pci;
    return *run_;
  }

  MemoryHost host;
  pipeline::PfHost os{host, host, host, host};
  pipeline::NameRegistry names;
  model::Config config;
  model::CompatTable table;
  model::HostInfo info;
  model::PfTarget planned;
  std::vector<std::string> steps;
  std::unique_ptr<pipeline::PfRun> run_;
};

}  // namespace vfready::testing
