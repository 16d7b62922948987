// SPDX-License-Identifier: Apache-2.0
#include "vfready/pipeline/vf_work.hpp"

#include <utility>

namespace vfready::pipeline {

model::VfStatus report(VfWork vf) {
  model::VfStatus vs;
  vs.index = vf.index;
  vs.pci = vf.pci;
  vs.name = std::move(vf.name);
  vs.altnames = std::move(vf.altnames);
  vs.guid = vf.guid;
  vs.mac = vf.mac;
  vs.ifindex = vf.ifindex;
  vs.in_use = std::move(vf.in_use);
  vs.problems = std::move(vf.problems);
  vs.checked = vf.checked;
  return vs;
}

}  // namespace vfready::pipeline
