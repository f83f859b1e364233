// SPDX-License-Identifier: Apache-2.0
// fabric.rail_skew: the judgement of one window's per-rail rates (railscope/node/rail_skew.h) and the
// verbs engine's per-port accumulator that feeds it (plugin/net/verbs/watch/rail_rate.h).
#include "railscope/node/rail_skew.h"

#include <gtest/gtest.h>

#include <string>

#include "plugin/net/verbs/watch/rail_rate.h"

namespace railscope {
namespace {

using node::RailRate;

// `mbps` MB/s (10^6 bytes per second) over `busy_s` seconds of 1 MiB transfers.
RailRate rail(const std::string& port, double mbps, double busy_s) {
  RailRate r;
  r.port = port;
  r.busy_ns = static_cast<uint64_t>(busy_s * 1e9);
  r.bytes = static_cast<uint64_t>(mbps * 1e6 * busy_s);
  r.transfers = r.bytes / (1 << 20);
  return r;
}

TEST(RailSkew, HealthyRailsAtEqualPaceSayNothing) {
  EXPECT_FALSE(node::rail_skew({rail("mlx5_0:1", 45000, 8), rail("mlx5_1:1", 46000, 8),
                                rail("mlx5_2:1", 44000, 8), rail("mlx5_3:1", 45500, 8)},
                               10.0));
  // Two rails, the spread a healthy run can show (well inside the ratio).
  EXPECT_FALSE(node::rail_skew({rail("rxe1:1", 14, 9), rail("rxe3:1", 9, 9)}, 10.0));
}

TEST(RailSkew, OneSlowRailIsNamedWithItsFigures) {
  const auto f = node::rail_skew({rail("mlx5_0:1", 45000, 8), rail("mlx5_1:1", 46000, 8),
                                  rail("mlx5_2:1", 12000, 9.5), rail("mlx5_3:1", 44000, 8)},
                                 10.0);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->id(), "fabric.rail_skew");
  EXPECT_EQ(
      f->detail.rfind("mlx5_2:1: large transfers (>= 64 KiB) ran at 12 GB/s while the other rails' median "
                      "is 45 GB/s (0.27x) over 10.0 s",
                      0),
      0u)
      << f->detail;
  for (const char* part : {"MiB in", "transfers", "busy 9.50 s", "mlx5_1:1 46 GB/s"})
    EXPECT_NE(f->detail.find(part), std::string::npos) << part << " in " << f->detail;
  EXPECT_NE(f->effective_fix().find("mlx5_2:1"), std::string::npos);
  EXPECT_NE(f->effective_fix().find("railscope doctor"), std::string::npos);
  EXPECT_NE(f->effective_fix().find("railscope preflight"), std::string::npos);
  // Two rails: the slow one against the other.
  const auto two = node::rail_skew({rail("rxe1:1", 14, 5), rail("rxe3:1", 3, 8)}, 9.0);
  ASSERT_TRUE(two);
  EXPECT_EQ(two->detail.rfind("rxe3:1:", 0), 0u) << two->detail;
}

TEST(RailSkew, TooLittleTrafficSaysNothing) {
  // One rail only.
  EXPECT_FALSE(node::rail_skew({rail("mlx5_0:1", 45000, 8)}, 10.0));
  EXPECT_FALSE(node::rail_skew({}, 10.0));
  // The slow rail moved a handful of transfers: not judged, and one rail is left.
  RailRate few = rail("mlx5_1:1", 1000, 1);
  few.transfers = node::kRailSkewMinTransfers - 1;
  EXPECT_FALSE(node::rail_skew({rail("mlx5_0:1", 45000, 8), few}, 10.0));
  // Busy for less than the minimum: not judged.
  RailRate brief = rail("mlx5_1:1", 1000, 0.05);
  brief.transfers = 100;
  EXPECT_FALSE(node::rail_skew({rail("mlx5_0:1", 45000, 8), brief}, 10.0));
  // Idle rails (no busy time) never divide by zero.
  EXPECT_FALSE(node::rail_skew({RailRate{"a:1", 0, 0, 0}, RailRate{"b:1", 0, 0, 0}}, 10.0));
}

TEST(RailSkew, JustAboveTheRatioIsHealthy) {
  EXPECT_FALSE(node::rail_skew({rail("a:1", 100, 5), rail("b:1", 51, 5)}, 10.0));
  EXPECT_TRUE(node::rail_skew({rail("a:1", 100, 5), rail("b:1", 49, 5)}, 10.0));
}

TEST(RailSkew, ASlowRailThatCostTheWindowLittleSaysNothing) {
  // A healthy two-port virtual NIC on the soft-RoCE test bed: 219 parts of 512 KiB per port in 6.1 s, one
  // port's completions twice as late (an emulated CPU busy elsewhere): 0.49x, but the slow port took
  // 0.23 s longer than its sibling's pace, 3.8 % of the window.
  const RailRate fast{"rxe0:1", 219ull * 512 * 1024, 221'000'000, 219};
  const RailRate slow{"rxe2:1", 219ull * 512 * 1024, 453'000'000, 219};
  ASSERT_TRUE(node::slow_rail({fast, slow}));
  EXPECT_NEAR(node::rail_skew_cost_seconds(slow, fast.bytes_per_second()), 0.232, 0.001);
  EXPECT_FALSE(node::rail_skew({fast, slow}, 6.1));
  // The same rates with the slow port busy for most of the window: named, with what it cost.
  RailRate busy = slow;
  busy.bytes *= 10;
  busy.busy_ns *= 10;
  busy.transfers *= 10;
  const auto f = node::rail_skew({fast, busy}, 6.1);
  ASSERT_TRUE(f);
  EXPECT_NE(f->detail.find("it took 2.32 s (38 % of the window) longer"), std::string::npos) << f->detail;
  // Just below and above the cost bound (kRailSkewMinCost of a 10 s window: 1 s), at 0.4x.
  EXPECT_FALSE(node::rail_skew({rail("a:1", 100, 1.6), rail("b:1", 40, 1.6)}, 10.0));
  EXPECT_TRUE(node::rail_skew({rail("a:1", 100, 1.7), rail("b:1", 40, 1.7)}, 10.0));
  // A slow rail's cost is never negative, and nothing divides by a zero rate.
  EXPECT_EQ(node::rail_skew_cost_seconds(fast, fast.bytes_per_second() / 2), 0.0);
  EXPECT_EQ(node::rail_skew_cost_seconds(fast, 0.0), 0.0);
}

TEST(RailRateAccumulator, BusyTimeCountsOverlappingTransfersOnce) {
  net::verbs::RailRateAccumulator a;
  a.add(1000, 0, 100);    // busy 0..100
  a.add(1000, 50, 150);   // overlaps: +50
  a.add(1000, 300, 400);  // after an idle gap: +100
  a.add(1000, 320, 380);  // inside what is counted: +0
  const auto t = a.totals();
  EXPECT_EQ(t.bytes, 4000u);
  EXPECT_EQ(t.transfers, 4u);
  EXPECT_EQ(t.busy_ns, 250u);
  const auto later = [&] {
    a.add(500, 400, 450);
    return a.totals();
  }();
  const auto d = later.since(t);
  EXPECT_EQ(d.bytes, 500u);
  EXPECT_EQ(d.busy_ns, 50u);
  EXPECT_EQ(d.transfers, 1u);
}

}  // namespace
}  // namespace railscope
