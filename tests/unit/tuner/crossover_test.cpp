// SPDX-License-Identifier: Apache-2.0
// The switch from Tree/LL to Ring/Simple happens where the α-β figures say it should: the test
// computes the analytic crossover S* = (α_ring − α_tree) / (β_tree − β_ring) itself, from the
// standard figures and the topology, and requires the engine's switch point within a factor of 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "test_topologies.h"

namespace railscope::tuner {
namespace {

struct Case {
  int nodes, gpus, nics;
  double gbps;
};

double analytic_crossover(const Case& c) {
  const Figures f = standard_figures();
  const double n = c.nodes * c.gpus;
  const double islands = c.nodes;
  const double busbw = std::min(kNvlinkGbytes, c.nics * c.gbps / 8.0 * f.nic_eff);  // GB/s
  const double factor = 2.0 * (n - 1) / n;                                          // AllReduce bus factor
  // Tree/LL: up and down the intra chain and the log2 inter-node tree.
  const double tree_alpha =
      f.base_lat_us[kTree][kLL] + 2 * ((c.gpus - 1) * f.hw_lat_us[kHwNvlink][kTree][kLL] +
                                       std::ceil(std::log2(islands)) * f.hw_lat_us[kHwNet][kTree][kLL]);
  const double tree_beta = factor / (busbw * f.tree_eff * f.proto_eff[kLL] * 1e3);
  // Ring/Simple: 2(n−1) hops, 2(nodes−1) of them over the network.
  const double net_hops = 2 * (islands - 1), all_hops = 2 * (n - 1);
  const double ring_alpha = f.base_lat_us[kRing][kSimple] +
                            (all_hops - net_hops) * f.hw_lat_us[kHwNvlink][kRing][kSimple] +
                            net_hops * f.hw_lat_us[kHwNet][kRing][kSimple];
  const double ring_beta = factor / (busbw * f.proto_eff[kSimple] * 1e3);
  return (ring_alpha - tree_alpha) / (tree_beta - ring_beta);
}

TEST(Crossover, TreeLLToRingSimpleWithinFactorTwoOfAnalytic) {
  for (const Case c : {Case{2, 8, 4, 400}, Case{4, 8, 4, 400}, Case{16, 8, 8, 400}, Case{8, 4, 1, 100},
                       Case{32, 8, 2, 200}}) {
    auto e = test::engine(test::inputs(c.nodes, c.gpus, c.nics, c.gbps));
    // Only the two contenders are supported, as with NCCL_ALGO/PROTO-free NCCL offering both.
    float t[kNumAlgos][kNumProtos];
    for (auto& row : t)
      for (float& v : row) v = -1;
    t[kTree][kLL] = t[kRing][kSimple] = 1.0f;
    const TableView view{&t[0][0], kNumAlgos, kNumProtos};
    // Scan in steps of 2^(1/8) for the first size where Ring/Simple wins.
    double switch_at = 0;
    for (double s = 8; s < 1e13; s *= std::pow(2.0, 0.125)) {
      const Decision d = e->decide(kAllReduce, static_cast<uint64_t>(s), 1, 0, view);
      if (d.algo == kRing) {
        switch_at = s;
        break;
      }
      ASSERT_EQ(d.algo, kTree);
    }
    const double expected = analytic_crossover(c);
    ASSERT_GT(expected, 0);
    ASSERT_GT(switch_at, 0) << "never switched to Ring/Simple";
    EXPECT_LE(switch_at / expected, 2.0) << c.nodes << "x" << c.gpus << " analytic " << expected;
    EXPECT_GE(switch_at / expected, 0.5) << c.nodes << "x" << c.gpus << " analytic " << expected;
  }
}

}  // namespace
}  // namespace railscope::tuner
