// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>

#include "vfready/model/status.hpp"

// The status as what the cluster reads from a node's files: Node Feature Discovery's
// local feature file (labels) and node_exporter's textfile metrics. Pure text, rendered
// from the status; vfreadyd writes them (docs/kubernetes.md lists every label and metric).
namespace vfready::model {

// "vfready.io/ready=true" lines, for /etc/kubernetes/node-feature-discovery/features.d/.
std::string node_feature_labels(const DaemonStatus& status);

// Prometheus text exposition format 0.0.4. `now_unix_ms`: when it is written.
std::string prometheus_metrics(const DaemonStatus& status, int64_t now_unix_ms);

// Prometheus label value escaping: \ " and newline.
std::string prometheus_label_value(const std::string& value);

}  // namespace vfready::model
