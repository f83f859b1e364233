// SPDX-License-Identifier: Apache-2.0
// Sanity of the α-β model: costs grow with size, small messages go to Tree/LL and large ones to
// Ring/Simple on a multi-node topology with the standard figures, and the inputs it depends on
// (NICs, NVLink domains, NCCL's constants, measured figures) change what they should.
#include <gtest/gtest.h>

#include "test_topologies.h"

namespace railscope::tuner {
namespace {

using test::engine;
using test::inputs;
using test::Table;

TEST(CostModel, EveryCandidateAndTheChoiceAreMonotonicInSize) {
  for (auto [nodes, gpus] : {std::pair{1, 8}, {2, 8}, {4, 8}, {16, 8}, {8, 1}}) {
    auto e = engine(inputs(nodes, gpus, 4, 400));
    ASSERT_TRUE(e);
    for (int coll = 0; coll < kNumColls; ++coll) {
      Table table(*e, coll);
      Decision prev;
      for (uint64_t s = 8; s <= (16ull << 30); s *= 2) {
        const Decision d = e->decide(coll, s, 1, 0, table.view());
        ASSERT_TRUE(d.changes_table()) << coll_name(coll) << " " << s;
        if (prev.coll >= 0) {
          EXPECT_GE(d.cost, prev.cost)
              << coll_name(coll) << " at " << s << " bytes, " << nodes << "x" << gpus;
          for (int a = 0; a < kNumAlgos; ++a)
            for (int p = 0; p < kNumProtos; ++p)
              if (d.cand[a][p].source != CostSource::None) {
                EXPECT_GE(d.cand[a][p].cost, prev.cand[a][p].cost) << algo_name(a) << "/" << proto_name(p);
              }
        }
        prev = d;
      }
    }
  }
}

TEST(CostModel, TreeLLSmallRingSimpleLargeOnMultiNode) {
  for (int nodes : {2, 4, 16, 64}) {
    auto e = engine(inputs(nodes, 8, 4, 400));
    Table table(*e, kAllReduce);
    const Decision small = e->decide(kAllReduce, 1024, 1, 0, table.view());
    EXPECT_EQ(small.algo, kTree) << nodes << " nodes";
    EXPECT_EQ(small.proto, kLL) << nodes << " nodes";
    EXPECT_EQ(small.reason, Reason::Model);
    const Decision large = e->decide(kAllReduce, 8ull << 30, 1, 0, table.view());
    EXPECT_EQ(large.algo, kRing) << nodes << " nodes";
    EXPECT_EQ(large.proto, kSimple) << nodes << " nodes";
  }
}

TEST(CostModel, AllGatherSmallLLLargeSimple) {
  auto e = engine(inputs(4, 8, 4, 400));
  Table table(*e, kAllGather);
  EXPECT_EQ(e->decide(kAllGather, 256, 1, 0, table.view()).proto, kLL);
  EXPECT_EQ(e->decide(kAllGather, 4ull << 30, 1, 0, table.view()).proto, kSimple);
}

TEST(CostModel, NoNicFactsMeansNoModelOnMultiNodeAndNcclDecides) {
  auto e = engine(inputs(4, 8, 0, 0));
  EXPECT_FALSE(e->model().inter_known);
  Table table(*e, kAllReduce);
  const Decision d = e->decide(kAllReduce, 1 << 20, 1, 0, table.view());
  EXPECT_EQ(d.reason, Reason::NcclNoModel);
  EXPECT_FALSE(d.changes_table());
}

TEST(CostModel, SingleNodeNeedsNoNics) {
  auto e = engine(inputs(1, 8, 0, 0));
  Table table(*e, kAllReduce);
  EXPECT_EQ(e->decide(kAllReduce, 1 << 20, 1, 0, table.view()).reason, Reason::Model);
}

TEST(CostModel, MoreRailsMakeLargeMessagesCheaper) {
  auto two = engine(inputs(4, 8, 2, 400));
  auto eight = engine(inputs(4, 8, 8, 400));
  const uint64_t s = 1ull << 30;
  const Terms a = price(two->model().coeff[kAllReduce][kRing][kSimple], s, 1);
  const Terms b = price(eight->model().coeff[kAllReduce][kRing][kSimple], s, 1);
  EXPECT_LT(b.bandwidth_us, a.bandwidth_us);
  EXPECT_FLOAT_EQ(a.latency_us, b.latency_us);
}

TEST(CostModel, NvlDomainsSpanningNodesRemoveTheNetworkHop) {
  EngineInputs in = inputs(4, 4, 0, 0);  // no NIC facts: only possible if one NVLink domain
  in.shape.nvl_domains = 1;
  in.shape.min_ranks_per_nvl_domain = in.shape.max_ranks_per_nvl_domain = 16;
  auto e = engine(in);
  EXPECT_EQ(e->topology().islands, 1);
  EXPECT_TRUE(e->model().inter_known);
}

TEST(CostModel, NvlDomainsOfOneRankMeanPcie) {
  EngineInputs in = inputs(1, 4, 0, 0);
  in.shape.nvl_domains = 4;
  in.shape.min_ranks_per_nvl_domain = in.shape.max_ranks_per_nvl_domain = 1;
  auto e = engine(in);
  EXPECT_EQ(e->topology().intra, IntraLink::Pcie);
  EXPECT_DOUBLE_EQ(e->topology().intra_gbps, kPcieGbytes);
}

TEST(CostModel, NcclConstantsReplaceTheStandardLatencies) {
  ncclTunerConstants_v5_t c{};
  const Figures std_fig = standard_figures();
  for (int a = 0; a < kNumAlgos; ++a)
    for (int p = 0; p < kNumProtos; ++p) {
      c.baseLatencies[a][p] = std_fig.base_lat_us[a][p];
      for (int h = 0; h < 3; ++h) c.hwLatencies[h][a][p] = std_fig.hw_lat_us[h][a][p];
    }
  c.hwLatencies[NCCL_HW_NET][kRing][kSimple] = 100.0;
  c.baseLatencies[kTree][kLL] = -5;  // not a latency: the standard figure stays
  EngineInputs in = inputs(4, 8, 4, 400);
  in.constants = &c;
  auto e = engine(in);
  EXPECT_EQ(e->figures().source, "nccl-constants");
  EXPECT_DOUBLE_EQ(e->figures().hw_lat_us[kHwNet][kRing][kSimple], 100.0);
  EXPECT_DOUBLE_EQ(e->figures().base_lat_us[kTree][kLL], std_fig.base_lat_us[kTree][kLL]);
  auto plain = engine(inputs(4, 8, 4, 400));
  EXPECT_GT(e->model().coeff[kAllReduce][kRing][kSimple].alpha_us,
            plain->model().coeff[kAllReduce][kRing][kSimple].alpha_us);
}

TEST(CostModel, PipelinedOpsChargeRingLatencyPerOp) {
  auto e = engine(inputs(4, 8, 4, 400));
  const Coeffs& ring = e->model().coeff[kAllReduce][kRing][kSimple];
  const Coeffs& tree = e->model().coeff[kAllReduce][kTree][kSimple];
  EXPECT_FLOAT_EQ(price(ring, 4096, 4).latency_us, 4 * price(ring, 4096, 1).latency_us);
  EXPECT_FLOAT_EQ(price(tree, 4096, 4).latency_us, price(tree, 4096, 1).latency_us);
  EXPECT_FLOAT_EQ(price(tree, 4096, 9).latency_us, 2 * price(tree, 4096, 1).latency_us);
}

TEST(CostModel, PatOnlyWithOneRankPerNode) {
  auto one = engine(inputs(8, 1, 1, 100));
  auto eight = engine(inputs(8, 8, 1, 100));
  EXPECT_EQ(one->model().coeff[kAllGather][kPat][kSimple].source, CostSource::Model);
  EXPECT_EQ(eight->model().coeff[kAllGather][kPat][kSimple].source, CostSource::None);
  EXPECT_EQ(one->model().coeff[kAllReduce][kPat][kSimple].source, CostSource::None);
}

TEST(CostModel, NoModelForCollNetOrNvls) {
  auto e = engine(inputs(4, 8, 4, 400));
  for (int coll = 0; coll < kNumColls; ++coll)
    for (int a : {kCollNetDirect, kCollNetChain, kNvls, kNvlsTree})
      for (int p = 0; p < kNumProtos; ++p) {
        EXPECT_EQ(e->model().coeff[coll][a][p].source, CostSource::None);
      }
}

}  // namespace
}  // namespace railscope::tuner

namespace railscope::tuner {
namespace {

// The NICs one node's ranks of a communicator drive, not the node's total.
TEST(RailsDriven, FollowTheRanksPerNodeAndTheGpusSharingTheNics) {
  EXPECT_EQ(rails_driven(1, 8, 8), 1);   // one GPU of a rail-optimised node: its own NIC
  EXPECT_EQ(rails_driven(8, 8, 8), 8);   // every GPU: every NIC
  EXPECT_EQ(rails_driven(1, 8, 4), 2);   // two NICs per GPU
  EXPECT_EQ(rails_driven(2, 8, 16), 1);  // two GPUs share a NIC
  EXPECT_EQ(rails_driven(3, 8, 16), 2);
  EXPECT_EQ(rails_driven(1, 8, 0), 1);  // unknown GPUs: one per NIC
  EXPECT_EQ(rails_driven(16, 8, 0), 8);
  EXPECT_EQ(rails_driven(4, 0, 8), 0);
}

// 16 nodes x 1 GPU on 8 x 400 Gb/s nodes: one NIC's bandwidth (47.5 GB/s after NIC efficiency), not
// the eight NICs' 380.
TEST(CostModel, OneRankPerNodeGetsOneNicNotTheNodesTotal) {
  auto e = engine(inputs(16, 1, 8, 400));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->topology().rails, 1);
  const Coeffs& c = e->model().coeff[kAllReduce][kRing][kSimple];
  const double busbw_gbs = bus_factor(kAllReduce, 16) / c.beta_us_per_byte / 1e3;
  EXPECT_NEAR(busbw_gbs, 400.0 / 8 * e->figures().nic_eff, 0.1);
  auto full = engine(inputs(16, 8, 8, 400));
  EXPECT_EQ(full->topology().rails, 8);
}

// 2 nodes x 1 GPU on 400 Gb/s NICs: one rail bounds the ring, so a large AllReduce's time follows the
// rate measured per rail (preflight's), up to the line rate of 50 GB/s; a rate above it was not measured
// on these NICs and the nominal 47.5 GB/s (line rate x NIC efficiency) stands.
TEST(CostModel, NetworkBoundTimeFollowsTheMeasuredRailRate) {
  auto e = engine(inputs(2, 1, 8, 400));
  ASSERT_TRUE(e);
  const auto time_us = [&](double rail_gbs) {
    const CostModel m = build_cost_model(e->topology(), e->figures(), {}, rail_gbs);
    return price(m.coeff[kAllReduce][kRing][kSimple], 1ull << 30, 1).total();
  };
  const float nominal = time_us(0);
  EXPECT_NEAR(time_us(25) / nominal, 47.5 / 25, 0.01);
  EXPECT_NEAR(time_us(50) / nominal, 47.5 / 50, 0.01);
  EXPECT_EQ(time_us(60), nominal);
  EXPECT_TRUE(build_cost_model(e->topology(), e->figures(), {}, 25).rail_measured);
  const CostModel above = build_cost_model(e->topology(), e->figures(), {}, 60);
  EXPECT_FALSE(above.rail_measured);
  EXPECT_NEAR(above.rail_gbs, 47.5, 1e-9);
}

}  // namespace
}  // namespace railscope::tuner
