// SPDX-License-Identifier: Apache-2.0
// Bandwidth arithmetic through the real plugin, for every ABI version: records carry the
// nccl-tests message size, algbw and busbw for every op at n = 2, 8, 64 (v4+: nRanks is known);
// v1..v3 give no nRanks, so busbw must be null and algbw consistent with the measured time.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "abi/profiler/profile_json.h"

namespace railscope::abi_test {
namespace {

const char* const kCollOps[] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce", "AlltoAll"};

class BusbwByVersion : public ::testing::TestWithParam<int> {};

TEST_P(BusbwByVersion, MatchesNcclTestsForEveryOpAndRankCount) {
  const int version = GetParam();
  const std::string dir = fresh_profile_dir("busbw");
  ProfilerDriver drv(version);
  ASSERT_TRUE(drv.loaded()) << drv.load_error();
  constexpr uint64_t kGpuNs = 1'000'000;  // 1 ms exactly, through the KernelCh GPU timers
  constexpr uint64_t kCount = 1 << 20;
  for (int n : {2, 8, 64}) {
    ASSERT_EQ(drv.init(0xabc000 + static_cast<uint64_t>(n), 0, n, n / 2 > 0 ? n / 2 : 1), ncclSuccess);
    EXPECT_EQ(drv.mask() & ncclProfileColl, ncclProfileColl);
    uint64_t seq = 0;
    for (const char* op : kCollOps) {
      CollSpec s;
      s.func = op;
      s.count = kCount;
      s.seq = seq++;
      drv.run_coll(s, kGpuNs);
    }
    drv.run_p2p("Send", 4 << 20, 1, kGpuNs);
    drv.run_p2p("Recv", 4 << 20, 1, kGpuNs);
    ASSERT_EQ(drv.finalize(), ncclSuccess);
  }
  const auto all = parse_profile(dir);
  ASSERT_FALSE(of_type(all, "header").empty());
  auto records = of_type(all, "coll");
  const auto p2ps = of_type(all, "p2p");
  records.insert(records.end(), p2ps.begin(), p2ps.end());
  ASSERT_EQ(records.size(), 3u * 8u);
  int checked = 0;
  for (const auto& r : records) {
    const std::string op = r.at("op");
    const int n = r.at("nranks");
    const bool p2p = r.at("type") == "p2p";
    const double type_size = p2p ? 1.0 : 4.0;
    const double count = p2p ? (4 << 20) : kCount;
    const double bytes = nccl_tests_bytes(op, count, type_size, n);
    SCOPED_TRACE(op + " n=" + std::to_string(n));
    EXPECT_EQ(r.at("bytes").get<double>(), bytes);
    EXPECT_EQ(r.at("timing"), "gpu");
    EXPECT_TRUE(r.at("complete").get<bool>());
    EXPECT_NEAR(r.at("time_us").get<double>(), 1000.0, 1e-9);
    const double algbw = bytes / 1e-3 / 1e9;
    EXPECT_NEAR(r.at("algbw_gbs").get<double>(), algbw, algbw * 1e-5);
    const double busbw = algbw * nccl_tests_factor(op, n);
    EXPECT_NEAR(r.at("busbw_gbs").get<double>(), busbw, busbw * 1e-5);
    EXPECT_EQ(r.at("rank"), 0);
    if (!p2p) {
      EXPECT_EQ(r.at("algo"), "RING");
      EXPECT_EQ(r.at("proto"), "SIMPLE");
      EXPECT_EQ(r.at("channels"), 2);
      EXPECT_EQ(r.at("dtype"), "ncclFloat32");
      ASSERT_TRUE(r.contains("waits"));
      EXPECT_EQ(r.at("waits").size(), 4u);  // 2 channels × send/recv
      for (const auto& w : r.at("waits")) {
        EXPECT_EQ(w.at("steps"), 2);
        EXPECT_EQ(w.at("bytes"), 2 * 4096);
        EXPECT_EQ(w.at("peer"), 1);
      }
    }
    if (version >= 5) {
      EXPECT_EQ(r.at("graph"), p2p ? nlohmann::json() : nlohmann::json(false));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 24);
}

INSTANTIATE_TEST_SUITE_P(Abi, BusbwByVersion, ::testing::Values(4, 5, 6),
                         [](const auto& p) { return "v" + std::to_string(p.param); });

class LegacyVersion : public ::testing::TestWithParam<int> {};

TEST_P(LegacyVersion, RecordsWithoutNranksHaveAlgbwButNoBusbw) {
  const int version = GetParam();
  const std::string dir = fresh_profile_dir("legacy");
  ProfilerDriver drv(version);
  ASSERT_TRUE(drv.loaded()) << drv.load_error();
  ASSERT_EQ(drv.init(0, 3, 8, 2), ncclSuccess);
  EXPECT_EQ(drv.mask() & (ncclProfileGroupApi | ncclProfileCollApi), 0)
      << "API events do not exist before v5";
  for (const char* op : kCollOps) {
    CollSpec s;
    s.func = op;
    s.count = 1 << 16;
    drv.run_coll(s, 1'000'000);
  }
  ASSERT_EQ(drv.finalize(), ncclSuccess);
  const auto colls = of_type(parse_profile(dir), "coll");
  ASSERT_EQ(colls.size(), 6u);
  for (const auto& r : colls) {
    SCOPED_TRACE(r.dump());
    EXPECT_EQ(r.at("rank"), 3) << "rank comes from the descriptors before v4";
    EXPECT_TRUE(r.at("nranks").is_null());
    EXPECT_TRUE(r.at("busbw_gbs").is_null());
    EXPECT_EQ(r.at("bytes").get<double>(), (1 << 16) * 4.0) << "n unknown: counted as 1";
    EXPECT_EQ(r.at("timing"), version == 3 ? "cpu_kernel" : "cpu_proxy");
    const double t = r.at("time_us");
    ASSERT_GT(t, 0.0);
    EXPECT_NEAR(r.at("algbw_gbs").get<double>(), (1 << 16) * 4.0 / (t * 1e3), 1e-3);
    EXPECT_EQ(r.at("algo"), "RING");
    EXPECT_EQ(r.at("proto"), "SIMPLE");
    EXPECT_EQ(r.at("dtype"), "ncclFloat32");
  }
}

INSTANTIATE_TEST_SUITE_P(Abi, LegacyVersion, ::testing::Values(1, 2, 3),
                         [](const auto& p) { return "v" + std::to_string(p.param); });

}  // namespace
}  // namespace railscope::abi_test
