// SPDX-License-Identifier: Apache-2.0
// Pure parts of the data path: the request pool, the MR cache's range index, the retry budget, the
// link parameters from the environment, the receive slots' indices, and the statistics (histogram, JSON
// line).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <set>

#include "plugin/net/common/request_pool.h"
#include "plugin/net/common/stats.h"
#include "plugin/net/verbs/recv_comm.h"
#include "plugin/net/verbs/setup/link_params.h"
#include "plugin/net/verbs/setup/mr_cache.h"

namespace railscope::net::verbs {
namespace {

TEST(NetRequestPool, HandsOutEachObjectOnceAndRecycles) {
  RequestPool<int, 8> pool;
  std::set<int*> seen;
  for (int i = 0; i < 8; ++i) {
    int* p = pool.get();
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(pool.owns(p));
    EXPECT_TRUE(seen.insert(p).second);
  }
  EXPECT_EQ(pool.get(), nullptr);  // full: "try again", never an allocation
  int* back = *seen.begin();
  pool.put(back);
  EXPECT_EQ(pool.get(), back);
  int outside = 0;
  EXPECT_FALSE(pool.owns(&outside));
}

// A receive request's index (kept in the slot, not computed from its address) names its place in
// the connection's slots, and so its QP events' request slots.
TEST(NetRecvSlots, EachSlotKnowsItsIndex) {
  VerbsRecvComm c;
  for (size_t i = 0; i < c.slots().size(); ++i) {
    EXPECT_EQ(c.index_of(c.slots()[i]), i);
    EXPECT_EQ(&c.slots()[c.index_of(c.slots()[i])], &c.slots()[i]);
    EXPECT_EQ(c.event_slot(c.slots()[i], kMaxRecvs - 1), i * kMaxRecvs + kMaxRecvs - 1);
    EXPECT_EQ(c.slots()[i].comm, &c);
  }
}

TEST(NetMrRangeIndex, CoveringRangeIsReusedWithReferences) {
  RangeIndex<int> idx;
  EXPECT_EQ(idx.acquire(0x10000, 0x20000), nullptr);
  auto* a = idx.insert(0x10000, 0x20000, 1);
  auto* hit = idx.acquire(0x11000, 0x12000);  // inside
  ASSERT_EQ(hit, a);
  EXPECT_EQ(a->refs, 2);
  EXPECT_EQ(idx.acquire(0x10000, 0x21000), nullptr);  // runs past the end
  EXPECT_EQ(idx.acquire(0x0f000, 0x11000), nullptr);  // starts before
  auto* b = idx.insert(0x10000, 0x21000, 2);          // same start, longer: a second entry
  EXPECT_EQ(idx.size(), 2u);
  EXPECT_EQ(idx.acquire(0x20000, 0x20800), b);  // only the longer one covers this
  EXPECT_EQ(b->refs, 2);
  int out = 0;
  EXPECT_FALSE(idx.release(a, &out));
  EXPECT_TRUE(idx.release(a, &out));
  EXPECT_EQ(out, 1);
  EXPECT_EQ(idx.size(), 1u);
  EXPECT_EQ(idx.acquire(0x10000, 0x10010), b);
  EXPECT_FALSE(idx.release(b, &out));
  EXPECT_FALSE(idx.release(b, &out));
  EXPECT_TRUE(idx.release(b, &out));
  EXPECT_EQ(out, 2);
  EXPECT_EQ(idx.size(), 0u);
}

TEST(NetMrRangeIndex, PageAlignment) {
  using I = RangeIndex<int>;
  EXPECT_EQ(I::align_down(0x12345), 0x12000u);
  EXPECT_EQ(I::align_up(0x12345), 0x13000u);
  EXPECT_EQ(I::align_up(0x13000), 0x13000u);
}

TEST(NetRetryBudget, Arithmetic) {
  using std::chrono::microseconds;
  // NCCL's defaults: 4.096 us x 2^20 x 8 tries = 34.36 s.
  EXPECT_NEAR(static_cast<double>(retry_budget(20, 7).count()), 4.096 * 1048576 * 8, 2.0);
  EXPECT_NEAR(static_cast<double>(retry_budget(18, 3).count()), 4.096 * 262144 * 4, 2.0);
  // Tiny budgets are raised to the floor; timeout 0 (infinite) gets the fixed cap.
  EXPECT_EQ(retry_budget(1, 0), std::chrono::duration_cast<microseconds>(kMinStallBudget));
  EXPECT_EQ(retry_budget(0, 7), std::chrono::duration_cast<microseconds>(kInfiniteTimeoutBudget));
}

TEST(NetLinkParams, EnvAndCommunicatorTrafficClass) {
  unsetenv("NCCL_IB_TC");
  unsetenv("NCCL_IB_SL");
  setenv("NCCL_IB_TIMEOUT", "14", 1);
  setenv("NCCL_IB_RETRY_CNT", "3", 1);
  setenv("NCCL_IB_QPS_PER_CONNECTION", "4", 1);
  auto p = link_params_from_env(-1);
  EXPECT_EQ(p.timeout, 14);
  EXPECT_EQ(p.retry_cnt, 3);
  EXPECT_EQ(p.qps_per_conn, 4);
  EXPECT_EQ(p.traffic_class, 0);
  p = link_params_from_env(106);  // the communicator's class applies when NCCL_IB_TC/SL are unset
  EXPECT_EQ(p.traffic_class, 106);
  setenv("NCCL_IB_TC", "41", 1);
  setenv("NCCL_IB_SL", "2", 1);
  p = link_params_from_env(106);
  EXPECT_EQ(p.traffic_class, 41);
  EXPECT_EQ(p.service_level, 2);
  for (const char* v :
       {"NCCL_IB_TC", "NCCL_IB_SL", "NCCL_IB_TIMEOUT", "NCCL_IB_RETRY_CNT", "NCCL_IB_QPS_PER_CONNECTION"})
    unsetenv(v);
}

TEST(NetStats, LogSpacedHistogram) {
  LatencyHistogram h;
  EXPECT_EQ(LatencyHistogram::bucket_of(0), 0);
  EXPECT_EQ(LatencyHistogram::bucket_of(1), 1);
  EXPECT_EQ(LatencyHistogram::bucket_of(2), 2);
  EXPECT_EQ(LatencyHistogram::bucket_of(3), 2);
  EXPECT_EQ(LatencyHistogram::bucket_of(1000), 10);
  EXPECT_EQ(LatencyHistogram::bucket_of(~0ull), LatencyHistogram::kBuckets - 1);
  for (int i = 0; i < 99; ++i) h.add(20);
  h.add(5000);
  EXPECT_EQ(h.total(), 100u);
  EXPECT_EQ(h.quantile_upper_us(0.5), 32u);
  EXPECT_EQ(h.quantile_upper_us(0.999), 8192u);
}

TEST(NetStats, JsonLineParsesAndCarriesTheCounters) {
  ConnStats s;
  s.posted();
  s.posted();
  s.completed(4096, 30);
  s.completed(100, 3);
  s.error("wc.retry_exceeded");
  s.error("wc.retry_exceeded");
  ConnIdentity who;
  who.role = "send";
  who.local_host = "a\"b";
  who.local_dev = "rxe0";
  who.peer_dev = "rxe1";
  who.qps = 2;
  who.path_mtu = 1024;
  auto j = nlohmann::json::parse(stats_json(who, s));
  EXPECT_EQ(j["role"], "send");
  EXPECT_EQ(j["local"]["host"], "a\"b");
  EXPECT_EQ(j["bytes"], 4196);
  EXPECT_EQ(j["messages"], 2);
  EXPECT_EQ(j["max_inflight"], 2);
  EXPECT_EQ(j["path_mtu"], 1024);
  EXPECT_EQ(j["errors"]["wc.retry_exceeded"], 2);
  EXPECT_EQ(j["latency_us"]["counts"].size(), 32u);
  EXPECT_EQ(j["latency_us"]["counts"][5], 1);  // 30 us → [16, 32)
}

}  // namespace
}  // namespace railscope::net::verbs
