// The expected busbw ceiling of a multi-node collective, read from the node's RDMA ports: the sum of
// the line rates of the active ports NCCL would use (NCCL_IB_HCA), and how many rails that is.
// nccl-tests' inter-node busbw approaches the node's aggregate NIC bandwidth, so this is the figure
// the slow-collective diagnosis compares against when RAILSCOPE_EXPECTED_BUSBW is not set.
#pragma once

#include <optional>
#include <string>

#include "railscope/node/hca_filter.h"
#include "railscope/node/inventory.h"

namespace railscope::profiler {

struct NodeCeiling {
  double gbs = 0.0;   // GB/s (10^9 bytes per second)
  int rails = 0;      // active ports counted
  std::string ports;  // "mlx5_0:1,mlx5_1:1" — for the log line
};

// nullopt when no selected port is active with a known speed.
std::optional<NodeCeiling> node_ceiling(const node::Inventory& inventory, const node::HcaFilter& hca);

// The same, for this node (sysfs only: no device is opened). Cheap enough for once per process.
std::optional<NodeCeiling> node_ceiling_from_system();

}  // namespace railscope::profiler
