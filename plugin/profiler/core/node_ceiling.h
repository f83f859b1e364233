// SPDX-License-Identifier: Apache-2.0
// The node's RDMA ports NCCL would use (active, selected by NCCL_IB_HCA) with their line rates, and
// their sum: the most inter-node bandwidth any communicator of this node can have. What one
// communicator may expect of them depends on its shape (comm_expectation.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "railscope/node/hca_filter.h"
#include "railscope/node/inventory.h"

namespace railscope::profiler {

struct PortRate {
  std::string name;  // "mlx5_0:1"
  int64_t mbps = 0;  // line rate, Mb/s
};

struct NodeCeiling {
  double gbs = 0.0;             // GB/s (10^9 bytes per second)
  int rails = 0;                // active ports counted
  std::string ports;            // "mlx5_0:1,mlx5_1:1" — for the log line
  std::vector<PortRate> rates;  // each counted port, in the order of `ports`
  int gpus = 0;                 // NVIDIA GPUs on the node's PCI bus; 0 = unknown
};

// nullopt when no selected port is active with a known speed.
std::optional<NodeCeiling> node_ceiling(const node::Inventory& inventory, const node::HcaFilter& hca);

// The same, for this node, with its GPU count (sysfs only: no device is opened). Cheap enough for once
// per process.
std::optional<NodeCeiling> node_ceiling_from_system();

}  // namespace railscope::profiler
