// SPDX-License-Identifier: Apache-2.0
// The calibrated decision: NCCL's choice stands unless a measured entry beats it by more than both
// spreads; a calibration never turns an entry NCCL does not support into a choice; sizes between
// measured ones interpolate, sizes far outside get no figure; another shape or cluster is refused by id.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "test_topologies.h"

namespace railscope::tuner {
namespace {

using test::inputs;

constexpr const char* kCluster = "cluster nodes=2 ranks_per_node=8 nic_gbit=400 nics=8\n";

std::string point(const char* algo, const char* proto, const char* bytes, double busbw, double spread) {
  return fmt::format(
      "point coll=allreduce bytes={} algo={} proto={} ranks=16 nodes=2 busbw_GBps={} spread_GBps={} "
      "samples=5\n",
      bytes, algo, proto, busbw, spread);
}

struct Calibrated {
  Config config;
  CalibrationOrRefusal cal;
  std::unique_ptr<Engine> engine;
};

Calibrated calibrated(const std::string& text, EngineInputs in = inputs(2, 8, 8, 400)) {
  Calibrated c;
  ParsedConfig parsed = parse_config_text(text, "cal.txt");
  EXPECT_TRUE(parsed.errors.empty()) << parsed.errors.front().to_string();
  c.config = parsed.config;
  c.engine = test::engine(in);
  c.cal = build_calibration(c.config, c.engine->topology());
  return c;
}

// NCCL's table with its own estimates: the entry `nccl` is its choice (cheapest), every other
// supported entry dearer; `unsupported` marks one entry −1.
struct NcclTable {
  float t[kNumAlgos][kNumProtos];
  NcclTable(int nccl_algo, int nccl_proto, int off_algo = -1, int off_proto = -1) {
    for (auto& row : t)
      for (float& v : row) v = -1.0f;
    for (int a : {kTree, kRing})
      for (int p = 0; p < kNumProtos; ++p) t[a][p] = 100.0f;
    t[nccl_algo][nccl_proto] = 10.0f;
    if (off_algo >= 0) t[off_algo][off_proto] = -1.0f;
  }
  TableView view() const { return {&t[0][0], kNumAlgos, kNumProtos}; }
};

Decision decide_with(const Calibrated& c, uint64_t bytes, const NcclTable& table) {
  Policy p = c.engine->policy();
  p.calibration = &c.cal.calibration;
  return decide(p, kAllReduce, bytes, 1, 0, table.view());
}

TEST(Calibration, OverridesNcclOnlyBeyondBothSpreads) {
  const auto c = calibrated(std::string(kCluster) + point("ring", "simple", "64M", 100, 1) +
                            point("tree", "simple", "64M", 110, 2) + point("ring", "ll128", "64M", 104, 4));
  ASSERT_TRUE(c.cal.calibration.active);
  // NCCL picks ring/simple (100 ± 1): tree/simple (110 ± 2) is faster beyond both spreads.
  const Decision d = decide_with(c, 64 << 20, NcclTable(kRing, kSimple));
  EXPECT_EQ(d.reason, Reason::Measured);
  EXPECT_EQ(std::make_pair(d.algo, d.proto), std::make_pair(int(kTree), int(kSimple)));
  EXPECT_NEAR(expected_gain(d), 1.10, 1e-3);
  // NCCL picks ring/ll128 (104 ± 4): tree/simple's 110 − 2 is not above 104 + 4: NCCL's choice stands.
  const Decision keep = decide_with(c, 64 << 20, NcclTable(kRing, kLL128));
  EXPECT_EQ(keep.reason, Reason::MeasuredKeeps);
  EXPECT_FALSE(keep.changes_table());
  EXPECT_NE(measured_why(keep).find("within the spread"), std::string::npos) << measured_why(keep);
}

TEST(Calibration, NeverTurnsAnUnsupportedEntryIntoAChoice) {
  const auto c = calibrated(std::string(kCluster) + point("ring", "simple", "64M", 100, 0) +
                            point("tree", "simple", "64M", 200, 0) + point("tree", "ll128", "64M", 150, 0));
  NcclTable table(kRing, kSimple, kTree, kSimple);  // NCCL does not support tree/simple here
  const Decision d = decide_with(c, 64 << 20, table);
  EXPECT_EQ(std::make_pair(d.algo, d.proto), std::make_pair(int(kTree), int(kLL128)));
  float copy[kNumAlgos][kNumProtos];
  std::copy(&table.t[0][0], &table.t[0][0] + kNumAlgos * kNumProtos, &copy[0][0]);
  apply(d, &copy[0][0], kNumProtos, nullptr);
  EXPECT_EQ(copy[kTree][kSimple], -1.0f);
}

TEST(Calibration, NcclsChoiceUnmeasuredStands) {
  const auto c = calibrated(std::string(kCluster) + point("tree", "simple", "64M", 200, 0));
  const Decision d = decide_with(c, 64 << 20, NcclTable(kRing, kSimple));
  EXPECT_EQ(d.reason, Reason::MeasuredKeeps);
  EXPECT_FALSE(d.changes_table());
}

TEST(Calibration, InterpolatesBetweenSizesAndNeverFarOutside) {
  const auto c = calibrated(std::string(kCluster) + point("ring", "simple", "1M", 10, 0) +
                            point("ring", "simple", "4M", 30, 0));
  const Calibration& cal = c.cal.calibration;
  EXPECT_NEAR(cal.at(kAllReduce, kRing, kSimple, 2 << 20)->busbw_gbs, 20.0f, 1e-3);   // halfway in log2
  EXPECT_NEAR(cal.at(kAllReduce, kRing, kSimple, 8 << 20)->busbw_gbs, 30.0f, 1e-3);   // 2x: held
  EXPECT_NEAR(cal.at(kAllReduce, kRing, kSimple, 512 << 10)->busbw_gbs, 5.0f, 1e-3);  // same time
  EXPECT_FALSE(cal.at(kAllReduce, kRing, kSimple, 16 << 20));
  EXPECT_FALSE(cal.at(kAllReduce, kRing, kSimple, 256 << 10));
  EXPECT_FALSE(cal.at(kAllReduce, kTree, kSimple, 2 << 20));
  // Where nothing is measured the model decides, as without a calibration.
  const Decision far = decide_with(c, 1ull << 30, NcclTable(kRing, kSimple));
  EXPECT_EQ(far.reason, Reason::Model);
}

TEST(Calibration, AnotherShapeIsRefusedByName) {
  const auto c =
      calibrated(std::string(kCluster) + point("ring", "simple", "1M", 10, 0), inputs(4, 8, 8, 400));
  EXPECT_FALSE(c.cal.calibration.active);
  ASSERT_TRUE(c.cal.refusal);
  EXPECT_EQ(c.cal.refusal->id(), "tuner.calibration_other_shape");
  EXPECT_NE(c.cal.refusal->detail.find("16 ranks on 2 nodes"), std::string::npos) << c.cal.refusal->detail;
  EXPECT_NE(c.cal.refusal->detail.find("32 ranks on 4 nodes"), std::string::npos) << c.cal.refusal->detail;
}

TEST(Calibration, AnotherClusterIsRefusedByName) {
  const auto c =
      calibrated(std::string(kCluster) + point("ring", "simple", "1M", 10, 0), inputs(2, 8, 8, 200));
  EXPECT_FALSE(c.cal.calibration.active);
  ASSERT_TRUE(c.cal.refusal);
  EXPECT_EQ(c.cal.refusal->id(), "tuner.calibration_other_cluster");
  EXPECT_NE(c.cal.refusal->detail.find("400 Gbit/s there, 200 Gbit/s here"), std::string::npos)
      << c.cal.refusal->detail;
}

}  // namespace
}  // namespace railscope::tuner
