// SPDX-License-Identifier: Apache-2.0
// Rank 0's comparison of node reports (tools/preflight/consistency.h), up to 512 synthetic nodes.
#include <gtest/gtest.h>
#include <malloc.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "consistency.h"
#include "synthetic_node.h"

namespace railscope::preflight {
namespace {

std::vector<NodeReport> cluster(int n) {
  std::vector<NodeReport> v;
  for (int i = 0; i < n; ++i) v.push_back(healthy_node(i));
  return v;
}

std::vector<std::string> lines(const std::vector<diag::Finding>& f) {
  std::vector<std::string> out;
  for (const auto& x : f) out.push_back(std::string(x.id()) + " " + x.detail);
  return out;
}

TEST(Consistency, HealthyClusterHasNoFinding) {
  EXPECT_TRUE(check_consistency(cluster(2)).empty());
  const auto f = check_consistency(cluster(64));
  EXPECT_TRUE(f.empty()) << lines(f).front();
  EXPECT_TRUE(check_consistency(cluster(1)).empty());
}

TEST(Consistency, EveryPropertyNamesTheOddNodeAndNic) {
  struct Case {
    const char* id;
    void (*spoil)(NodeReport&);
    const char* expect;
  };
  const Case cases[] = {
      {"preflight.rail_mtu", [](NodeReport& r) { r.nics[3].active_mtu = 1024; },
       "rail 3: active MTU of node007/mlx5_3:1 is 1024, the other 15 of 16 nodes have 4096"},
      {"preflight.rail_gid_type", [](NodeReport& r) { r.nics[0].gid_type = "RoCE v1"; },
       "rail 0: GID type of node007/mlx5_0:1 is RoCE v1, the other 15 of 16 nodes have RoCE v2"},
      {"preflight.rail_gid_family", [](NodeReport& r) { r.nics[1].gid_family = "AF_INET6"; },
       "rail 1: GID family of node007/mlx5_1:1 is AF_INET6"},
      {"preflight.rail_rate", [](NodeReport& r) { r.nics[5].speed_mbps = 200000; },
       "rail 5: link rate (Mb/s) of node007/mlx5_5:1 is 200000"},
      {"preflight.rail_firmware", [](NodeReport& r) { r.nics[2].fw_ver = "28.38.1000"; },
       "rail 2: firmware of node007/mlx5_2:1 is 28.38.1000"},
      {"preflight.rail_misaligned", [](NodeReport& r) { std::swap(r.nics[6].subnet, r.nics[7].subnet); },
       "rail 6: subnet of node007/mlx5_6:1 is 10.7.0.0/16, the other 15 of 16 nodes have 10.6.0.0/16"},
      {"preflight.rail_link_layer", [](NodeReport& r) { r.nics[4].link_layer = "InfiniBand"; },
       "rail 4: link layer of node007/mlx5_4:1 is InfiniBand"},
      {"preflight.rail_count", [](NodeReport& r) { r.nics.pop_back(); },
       "the number of selected RDMA ports of node007 is 7, the other 15 of 16 nodes have 8"},
      {"preflight.nccl_ib_tc", [](NodeReport& r) { r.nccl_env["NCCL_IB_TC"] = "0"; },
       "NCCL_IB_TC of node007 is 0, the other 15 of 16 nodes have 106"},
      {"preflight.nccl_env", [](NodeReport& r) { r.nccl_env["NCCL_ALGO"] = "Ring"; },
       "NCCL_ALGO of node007 is Ring, the other 15 of 16 nodes have (unset)"},
  };
  for (const auto& c : cases) {
    auto nodes = cluster(16);
    c.spoil(nodes[7]);
    const auto f = check_consistency(nodes);
    ASSERT_EQ(f.size(), c.id == std::string("preflight.rail_misaligned") ? 2u : 1u)
        << c.id << ": " << ::testing::PrintToString(lines(f));
    EXPECT_EQ(f[0].id(), c.id);
    EXPECT_EQ(f[0].detail.rfind(c.expect, 0), 0u) << f[0].detail;
  }
}

TEST(Consistency, TwoNodesWithoutMajorityNameBoth) {
  auto nodes = cluster(2);
  nodes[1].nics[1].active_mtu = 1024;
  const auto f = check_consistency(nodes);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id(), "preflight.rail_mtu");
  EXPECT_EQ(f[0].detail,
            "rail 1: active MTU differs with no majority: node000/mlx5_1:1 4096, node001/mlx5_1:1 1024");
}

TEST(Consistency, UnknownValuesAreNotCompared) {
  auto nodes = cluster(4);
  nodes[2].nics[0].active_mtu = 0;  // sysfs only
  nodes[2].nics[0].fw_ver.clear();
  EXPECT_TRUE(check_consistency(nodes).empty());
}

TEST(Consistency, ManyOddNodesAreCounted) {
  auto nodes = cluster(200);
  for (int i = 0; i < 50; ++i) nodes[size_t(i) * 4].nics[0].active_mtu = 1024;
  const auto f = check_consistency(nodes);
  ASSERT_EQ(f.size(), kMaxNamedPerProperty + 1);
  EXPECT_NE(f.back().detail.find("18 more nodes differ from the majority 4096"), std::string::npos)
      << f.back().detail;
}

size_t heap_in_use() { return mallinfo2().uordblks; }

TEST(Consistency, FiveHundredTwelveReportsThroughJson) {
  // As rank 0 sees them: 512 reports as JSON text, each parsed and checked, then compared. Two faults.
  std::vector<std::string> wire;
  for (int i = 0; i < 512; ++i) {
    NodeReport r = healthy_node(i);
    if (i == 300) r.nics[3].active_mtu = 1024;
    if (i == 411) r.nics[5].subnet = "10.4.0.0/16";
    wire.push_back(to_json(r).dump());
  }
  size_t bytes = 0;
  for (const auto& w : wire) bytes += w.size();
  const size_t heap0 = heap_in_use();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<NodeReport> nodes;
  for (const auto& w : wire) {
    std::string error;
    auto r = node_report_from_json(nlohmann::json::parse(w), &error);
    ASSERT_TRUE(r) << error;
    nodes.push_back(std::move(*r));
  }
  const auto t1 = std::chrono::steady_clock::now();
  const auto f = check_consistency(nodes);
  const auto t2 = std::chrono::steady_clock::now();
  const size_t heap1 = heap_in_use();
  ASSERT_EQ(f.size(), 2u) << ::testing::PrintToString(lines(f));
  EXPECT_EQ(f[0].detail,
            "rail 3: active MTU of node300/mlx5_3:1 is 1024, the other 511 of 512 nodes have 4096");
  EXPECT_EQ(f[1].detail,
            "rail 5: subnet of node411/mlx5_5:1 is 10.4.0.0/16, the other 511 of 512 nodes have 10.5.0.0/16");
  const auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  std::printf(
      "512 reports (%zu KiB of JSON): parse+check %.1f ms, compare %.1f ms, parsed reports hold %zu KiB of "
      "heap\n",
      bytes / 1024, ms(t1 - t0), ms(t2 - t1), (heap1 - heap0) / 1024);
  EXPECT_LT(ms(t2 - t0), 5000);
}

}  // namespace
}  // namespace railscope::preflight
