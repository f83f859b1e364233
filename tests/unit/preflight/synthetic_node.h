// SPDX-License-Identifier: Apache-2.0
// Synthetic node reports for rank 0's tests (consistency, aggregation at 512 nodes).
#pragma once

#include <fmt/format.h>

#include "node_report.h"

namespace railscope::preflight {

// A DGX-like node: 8 RoCE rails, rail i in 10.<i>.0.0/16.
inline NodeReport healthy_node(int rank, int rails = 8) {
  NodeReport r;
  r.rank = rank;
  r.host = fmt::format("node{:03}", rank);
  for (int i = 0; i < rails; ++i) {
    NicSummary n;
    n.device = fmt::format("mlx5_{}", i);
    n.port = 1;
    n.state = "ACTIVE";
    n.link_layer = "Ethernet";
    n.netdev = fmt::format("eth{}", i);
    n.active_mtu = 4096;
    n.speed_mbps = 400000;
    n.fw_ver = "28.39.1002";
    n.gid_type = "RoCE v2";
    n.gid_family = "AF_INET";
    n.ipv4 = fmt::format("10.{}.{}.{}", i, rank / 256, rank % 256);
    n.subnet = fmt::format("10.{}.0.0/16", i);
    r.nics.push_back(n);
  }
  r.nccl_env = {
      {"NCCL_IB_TC", "106"}, {"NCCL_IB_GID_INDEX", "3"}, {"NCCL_IB_HCA", fmt::format("=mlx5_{}", rank % 2)}};
  return r;
}

}  // namespace railscope::preflight
