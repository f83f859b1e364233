// SPDX-License-Identifier: Apache-2.0
// The decision function on its own: rules, measured figures, NCCL's estimates where there is no
// model, the explanation line, and that applying a decision never makes an unsupported entry valid.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "test_topologies.h"

namespace railscope::tuner {
namespace {

using test::inputs;
using test::Table;

std::unique_ptr<Engine> engine_with_config(const std::string& text, EngineInputs in = inputs(4, 8, 4, 400)) {
  // One file per process: CTest runs each case as its own process, two at a time.
  const std::string path = ::testing::TempDir() + "/decide_test." + std::to_string(::getpid()) + ".conf";
  std::ofstream(path) << text;
  in.config_path = path;
  auto e = test::engine(in);
  std::remove(path.c_str());  // read at creation; the path stays in the engine's messages
  return e;
}

TEST(Decide, RulePinsWhereSupported) {
  auto e = engine_with_config("rule coll=allreduce bytes=1G.. algo=tree proto=ll channels=4\n");
  Table table(*e, kAllReduce);
  const Decision d = e->decide(kAllReduce, 2ull << 30, 1, 0, table.view());
  EXPECT_EQ(d.reason, Reason::Rule);
  EXPECT_EQ(d.algo, kTree);
  EXPECT_EQ(d.proto, kLL);
  EXPECT_EQ(d.channels, 4);
  ASSERT_NE(d.rule, nullptr);
  EXPECT_EQ(d.rule->line, 1);
  EXPECT_EQ(d.runner_algo, kRing);  // the model's favourite is the runner-up
  const std::string line = describe(d, e->config().path);
  EXPECT_NE(line.find("chose tree/ll"), std::string::npos) << line;
  EXPECT_NE(line.find("decided by rule at"), std::string::npos) << line;
  EXPECT_NE(line.find(".conf:1"), std::string::npos) << line;
}

TEST(Decide, RuleWhosePinIsUnsupportedIsSkipped) {
  auto e = engine_with_config("rule coll=allreduce algo=nvls proto=simple\n");
  Table table(*e, kAllReduce);  // no NVLS in the simulated table
  const Decision d = e->decide(kAllReduce, 1 << 20, 1, 0, table.view());
  EXPECT_EQ(d.reason, Reason::Model);
  EXPECT_NE(d.algo, kNvls);
  ASSERT_NE(d.rule_skipped, nullptr);
  EXPECT_NE(describe(d, "x").find("ignored: NCCL does not support its pin"), std::string::npos);
}

TEST(Decide, AlgoOnlyPinLetsTheModelPickTheProtocol) {
  auto e = engine_with_config("rule coll=allreduce algo=ring\n");
  Table table(*e, kAllReduce);
  EXPECT_EQ(e->decide(kAllReduce, 64, 1, 0, table.view()).proto, kLL);
  EXPECT_EQ(e->decide(kAllReduce, 8ull << 30, 1, 0, table.view()).proto, kSimple);
  EXPECT_EQ(e->decide(kAllReduce, 64, 1, 0, table.view()).algo, kRing);
}

TEST(Decide, MeasuredFigureForThisNodeCountReplacesTheModel) {
  auto e = engine_with_config(
      "measure coll=allreduce algo=ring proto=ll128 nodes=4 lat_us=1 busbw_gbps=10000\n"
      "measure coll=allreduce algo=tree proto=ll nodes=8 lat_us=0.1 busbw_gbps=10000\n");
  EXPECT_EQ(e->model().coeff[kAllReduce][kRing][kLL128].source, CostSource::Measured);
  EXPECT_EQ(e->model().coeff[kAllReduce][kTree][kLL].source, CostSource::Model);  // 8 nodes: not ours
  Table table(*e, kAllReduce);
  const Decision d = e->decide(kAllReduce, 1 << 20, 1, 0, table.view());
  EXPECT_EQ(d.algo, kRing);
  EXPECT_EQ(d.proto, kLL128);
  EXPECT_NE(describe(d, "").find("[measured]"), std::string::npos);
}

TEST(Decide, UnmodelledEntriesCompeteWithNcclsEstimate) {
  auto e = test::engine(inputs(4, 8, 4, 400));
  Table table(*e, kAllReduce);
  table.t[kNvlsTree][kSimple] = 0.001f;  // NCCL thinks NVLS-Tree is nearly free
  const Decision d = e->decide(kAllReduce, 1 << 20, 1, 0, table.view());
  EXPECT_EQ(d.algo, kNvlsTree);
  EXPECT_EQ(d.cand[kNvlsTree][kSimple].source, CostSource::None);
  EXPECT_NE(describe(d, "").find("[nccl]"), std::string::npos);
}

TEST(Decide, ApplyZeroesOnlyTheChoiceAndNeverRevivesIgnore) {
  auto e = test::engine(inputs(4, 8, 4, 400));
  Table table(*e, kAllReduce);
  table.t[kTree][kLL] = -1.0f;  // NCCL says Tree/LL is unsupported here
  float before[kNumAlgos][kNumProtos];
  std::copy(&table.t[0][0], &table.t[0][0] + 21, &before[0][0]);
  const Decision d = e->decide(kAllReduce, 64, 1, 0, table.view());
  ASSERT_TRUE(d.changes_table());
  EXPECT_FALSE(d.algo == kTree && d.proto == kLL);
  int channels = 0;
  apply(d, &table.t[0][0], kNumProtos, &channels);
  EXPECT_EQ(channels, 0);
  for (int a = 0; a < kNumAlgos; ++a)
    for (int p = 0; p < kNumProtos; ++p) {
      if (a == d.algo && p == d.proto)
        EXPECT_EQ(table.t[a][p], 0.0f);
      else
        EXPECT_EQ(table.t[a][p], before[a][p]) << a << "," << p;
    }
}

TEST(Decide, NothingSupportedLeavesEverything) {
  auto e = test::engine(inputs(4, 8, 4, 400));
  float t[kNumAlgos][kNumProtos];
  for (auto& row : t)
    for (float& v : row) v = -1;
  const Decision d = e->decide(kAllReduce, 64, 1, 0, {&t[0][0], kNumAlgos, kNumProtos});
  EXPECT_EQ(d.reason, Reason::NoCandidate);
  EXPECT_FALSE(d.changes_table());
}

TEST(Decide, SmallerTablesAreIndexedWithTheirOwnStride) {
  auto e = test::engine(inputs(4, 8, 4, 400));
  // An older NCCL with 6 algorithms and 2 protocols: entry (a, p) lives at a*2+p.
  float t[6 * 2];
  for (float& v : t) v = -1;
  t[kRing * 2 + kLL128] = 5.0f;
  const Decision d = e->decide(kAllReduce, 1 << 20, 1, 0, {t, 6, 2});
  EXPECT_EQ(d.algo, kRing);
  EXPECT_EQ(d.proto, kLL128);
}

TEST(Decide, ChunkSizeFromRules) {
  auto e = engine_with_config(
      "rule coll=allreduce bytes=1M..1G algo=ring proto=simple chunk=512K\n"
      "rule coll=allgather chunk=64K\n");
  uint64_t chunk = 7;
  EXPECT_TRUE(e->chunk_size(kAllReduce, 4 << 20, kRing, kSimple, &chunk));
  EXPECT_EQ(chunk, 512u << 10);
  chunk = 7;
  EXPECT_FALSE(e->chunk_size(kAllReduce, 4 << 20, kTree, kSimple, &chunk));  // pin does not match
  EXPECT_FALSE(e->chunk_size(kAllReduce, 64, kRing, kSimple, &chunk));       // size outside
  EXPECT_EQ(chunk, 7u);
  EXPECT_TRUE(e->chunk_size(kAllGather, 1, kPat, kSimple, &chunk));
  EXPECT_EQ(chunk, 64u << 10);
  EXPECT_FALSE(e->chunk_size(kAllGather, 1, kPat, kSimple, nullptr));
}

TEST(Decide, StrictModeRefusesABadConfigAndLaxModeDropsTheLine) {
  const std::string path = ::testing::TempDir() + "/decide_bad." + std::to_string(::getpid()) + ".conf";
  std::ofstream(path) << "rule coll=allreduce algo=tree\nrule coll=allreduce speed=9\n";
  EngineInputs in = inputs(4, 8, 4, 400);
  in.config_path = path;
  EngineOrError strict = Engine::create(in);
  ASSERT_TRUE(strict.error);
  EXPECT_FALSE(strict.engine);
  EXPECT_EQ(strict.error->id(), "tuner.config");
  EXPECT_NE(diag::one_line(*strict.error).find(".conf:2:21: unknown key 'speed'"), std::string::npos);
  in.strict = false;
  EngineOrError lax = Engine::create(in);
  ASSERT_TRUE(lax.engine);
  EXPECT_EQ(lax.engine->config().rules.size(), 1u);
  EXPECT_NE(lax.engine->summary().find("1 bad lines ignored"), std::string::npos);
}

}  // namespace
}  // namespace railscope::tuner
