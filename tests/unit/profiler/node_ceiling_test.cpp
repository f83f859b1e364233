// SPDX-License-Identifier: Apache-2.0
#include "plugin/profiler/core/node_ceiling.h"

#include <gtest/gtest.h>

namespace railscope::profiler {
namespace {

node::Port port(int number, bool active, int64_t mbps) {
  node::Port p;
  p.number = number;
  p.state = active ? node::PortState::Active : node::PortState::Down;
  p.speed_mbps = mbps;
  return p;
}

node::Inventory four_rail_node() {
  node::Inventory inv;
  for (int i = 0; i < 4; ++i) {
    node::Device d;
    d.name = "mlx5_" + std::to_string(i);
    d.ports.push_back(port(1, true, 400000));
    inv.devices.push_back(d);
  }
  node::Device down;
  down.name = "mlx5_4";
  down.ports.push_back(port(1, false, 400000));  // inactive ports do not carry traffic
  inv.devices.push_back(down);
  node::Device unknown;
  unknown.name = "mlx5_5";
  unknown.ports.push_back(port(1, true, 0));  // speed unknown: not counted
  inv.devices.push_back(unknown);
  return inv;
}

TEST(NodeCeiling, SumsActivePortsWithKnownSpeed) {
  auto c = node_ceiling(four_rail_node(), node::parse_hca_filter(""));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->rails, 4);
  EXPECT_DOUBLE_EQ(c->gbs, 200.0);  // 4 x 400 Gb/s = 1600 Gb/s = 200 GB/s
  EXPECT_EQ(c->ports, "mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1");
}

TEST(NodeCeiling, HonoursNcclIbHca) {
  auto c = node_ceiling(four_rail_node(), node::parse_hca_filter("^mlx5_0,mlx5_1"));  // excludes both
  ASSERT_TRUE(c);
  EXPECT_EQ(c->rails, 2);
  EXPECT_DOUBLE_EQ(c->gbs, 100.0);
  c = node_ceiling(four_rail_node(), node::parse_hca_filter("=mlx5_2"));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->rails, 1);
}

TEST(NodeCeiling, NoUsablePortMeansUnknown) {
  EXPECT_FALSE(node_ceiling(node::Inventory{}, node::parse_hca_filter("")));
  EXPECT_FALSE(node_ceiling(four_rail_node(), node::parse_hca_filter("mlx5_4,mlx5_5")));
}

}  // namespace
}  // namespace railscope::profiler
