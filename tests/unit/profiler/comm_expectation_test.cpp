// SPDX-License-Identifier: Apache-2.0
#include "plugin/profiler/core/comm_expectation.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace railscope::profiler {
namespace {

NodeCeiling node_of(int ports, int64_t mbps, int gpus) {
  NodeCeiling n;
  for (int i = 0; i < ports; ++i) {
    n.rates.push_back({"mlx5_" + std::to_string(i) + ":1", mbps});
    n.ports += (i ? "," : "") + n.rates.back().name;
    n.gbs += static_cast<double>(mbps) / 8000.0;
  }
  n.rails = ports;
  n.gpus = gpus;
  return n;
}

CommExpectation expect(int nranks, int nnodes, const NodeCeiling* node, const NetPortsSnapshot& seen = {}) {
  ExpectationSources src;
  src.node = node;
  return expected_busbw(nranks, nnodes, src, seen);
}

TEST(CommExpectation, ShapeSetsHowManyPortsTheLocalRanksDrive) {
  const NodeCeiling dgx = node_of(8, 400000, 8);
  EXPECT_DOUBLE_EQ(expect(2, 2, &dgx).gbs, 50.0);  // one GPU per node: one port
  EXPECT_EQ(expect(2, 2, &dgx).rails, 1);
  EXPECT_DOUBLE_EQ(expect(32, 32, &dgx).gbs, 50.0);
  EXPECT_DOUBLE_EQ(expect(8, 4, &dgx).gbs, 100.0);  // 2 ranks per node
  EXPECT_DOUBLE_EQ(expect(16, 2, &dgx).gbs, 400.0);
  EXPECT_EQ(expect(16, 2, &dgx).rails, 8);
  EXPECT_DOUBLE_EQ(expect(32, 2, &dgx).gbs, 400.0) << "more ranks than ports: every port, no more";
}

TEST(CommExpectation, GpusSharingAPortCountOnce) {
  const NodeCeiling half = node_of(4, 400000, 8);  // one port per 2 GPUs
  EXPECT_DOUBLE_EQ(expect(16, 2, &half).gbs, 200.0);
  EXPECT_DOUBLE_EQ(expect(4, 2, &half).gbs, 50.0) << "2 GPUs may share one port";
  EXPECT_DOUBLE_EQ(expect(6, 2, &half).gbs, 100.0);
  const NodeCeiling unknown_gpus = node_of(4, 400000, 0);
  EXPECT_DOUBLE_EQ(expect(4, 2, &unknown_gpus).gbs, 100.0) << "GPU count unknown: one port per rank";
}

TEST(CommExpectation, SlowestPortsCountWhenRatesDiffer) {
  NodeCeiling mixed = node_of(2, 400000, 2);
  mixed.rates[1].mbps = 200000;
  EXPECT_DOUBLE_EQ(expect(2, 2, &mixed).gbs, 25.0);
}

TEST(CommExpectation, NoNicFigureWithinOneNodeOrForAnUnknownShape) {
  const NodeCeiling dgx = node_of(8, 400000, 8);
  CommExpectation e = expect(8, 1, &dgx);
  EXPECT_EQ(e.gbs, 0.0);
  EXPECT_NE(e.basis.find("one node"), std::string::npos) << e.basis;
  EXPECT_EQ(expect(8, 0, &dgx).gbs, 0.0);
  e = expect(9, 2, &dgx);
  EXPECT_EQ(e.gbs, 0.0);
  EXPECT_NE(e.basis.find("9 ranks on 2 nodes"), std::string::npos) << e.basis;
  EXPECT_EQ(expect(2, 2, nullptr).gbs, 0.0);
}

TEST(CommExpectation, TheNetPluginsPortsAreTheBestEvidence) {
  const NodeCeiling dgx = node_of(8, 400000, 8);
  NetPortsSnapshot seen;
  seen.ports = {{"mlx5_0:1", 400000}, {"mlx5_1:1", 0}};  // a rate unknown to the plugin: sysfs's
  CommExpectation e = expect(2, 2, &dgx, seen);
  EXPECT_DOUBLE_EQ(e.gbs, 100.0);
  EXPECT_EQ(e.rails, 2);
  EXPECT_DOUBLE_EQ(expect(16, 2, &dgx, seen).gbs, 400.0) << "never more than the node's ports";
  EXPECT_DOUBLE_EQ(expect(2, 2, nullptr, seen).gbs, 50.0) << "no sysfs: only the rate the plugin gave";
  EXPECT_TRUE(e.gdr_evidence.empty());
  seen.host_staged_port = "mlx5_0:1";
  seen.host_staged_reason = "gdr.no_peermem";
  EXPECT_EQ(expect(2, 2, &dgx, seen).gdr_evidence,
            "the net plugin stages the traffic of mlx5_0:1 through host memory (gdr.no_peermem)");
}

TEST(CommExpectation, TheOverrideWinsEverywhere) {
  const NodeCeiling dgx = node_of(8, 400000, 8);
  ExpectationSources src;
  src.node = &dgx;
  src.override_gbs = 300.0;
  src.override_rails = 4;
  const CommExpectation e = expected_busbw(8, 1, src, {});
  EXPECT_DOUBLE_EQ(e.gbs, 300.0);
  EXPECT_EQ(e.rails, 4);
  src.override_gbs = 0.0;
  EXPECT_EQ(expected_busbw(16, 2, src, {}).rails, 4) << "RAILSCOPE_EXPECTED_RAILS alone sets k";
}

nccl::RailscopeNetPort_v1 port_event(const char* device, int port, const char* staged) {
  nccl::RailscopeNetPort_v1 d{};
  d.type = nccl::kRailscopeNetPort;
  d.port = port;
  d.speedMbps = 400000;
  d.hostStaged = staged != nullptr;
  d.reason = staged;
  std::snprintf(d.device, sizeof d.device, "%s", device);
  return d;
}

TEST(NetPortsSeen, DistinctPortsOnceAndTheFirstHostStagingWord) {
  NetPortsSeen seen;
  EXPECT_EQ(seen.generation(), 0u);
  seen.note(port_event("mlx5_0", 1, nullptr));
  seen.note(port_event("mlx5_0", 1, nullptr));
  seen.note(port_event("mlx5_1", 1, "gdr.no_peermem"));
  seen.note(port_event("mlx5_2", 1, "gdr.dmabuf_unsupported"));
  seen.note(port_event("", 1, nullptr));  // no name: ignored
  const NetPortsSnapshot s = seen.snapshot();
  ASSERT_EQ(s.ports.size(), 3u);
  EXPECT_EQ(s.ports[0].name, "mlx5_0:1");
  EXPECT_EQ(s.ports[2].name, "mlx5_2:1");
  EXPECT_EQ(s.host_staged_port, "mlx5_1:1");
  EXPECT_EQ(s.host_staged_reason, "gdr.no_peermem");
  EXPECT_EQ(seen.generation(), 4u);
}

TEST(NetPortsSeen, UnterminatedNamesAndManyPortsStayBounded) {
  NetPortsSeen seen;
  nccl::RailscopeNetPort_v1 d = port_event("x", 1, nullptr);
  std::memset(d.device, 'a', sizeof d.device);  // no NUL
  seen.note(d);
  ASSERT_EQ(seen.snapshot().ports.size(), 1u);
  EXPECT_EQ(seen.snapshot().ports[0].name, std::string(sizeof d.device, 'a') + ":1");
  for (int i = 0; i < 64; ++i) seen.note(port_event("mlx5_9", i, nullptr));
  EXPECT_EQ(seen.snapshot().ports.size(), NetPortsSeen::kSlots);
}

TEST(NetPortsSeen, ConcurrentWritersClaimEachPortOnce) {
  NetPortsSeen seen;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&seen] {
      for (int round = 0; round < 1000; ++round)
        for (int p = 0; p < 8; ++p) seen.note(port_event("mlx5_0", p, nullptr));
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(seen.snapshot().ports.size(), 8u);
  EXPECT_EQ(seen.generation(), 8u);
}

}  // namespace
}  // namespace railscope::profiler
