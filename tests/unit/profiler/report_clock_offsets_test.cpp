// SPDX-License-Identifier: Apache-2.0
// Stragglers across hosts whose clocks disagree: nodeB's clock runs 50 ms ahead of nodeA's, nodeC's 50 ms
// behind. The report estimates the offsets from the collectives' end times (nearly simultaneous on every
// rank), prints them, and names the rank that really starts late (on nodeC) — not nodeB's ranks, which
// only look late on their clock. The healthy twin, same clocks and no late rank, names no straggler.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tools/report/analysis.h"
#include "tools/report/render.h"
#include "unit/profiler/job_profiles.h"

namespace railscope::report {
namespace {

using namespace testing_job;

constexpr int kRanks = 6;
constexpr uint64_t kColls = 20;
constexpr int64_t kMs = 1'000'000;

std::string host_of(int rank) { return rank < 2 ? "nodeA" : rank < 4 ? "nodeB" : "nodeC"; }
int64_t clock_of(int rank) { return rank < 2 ? 0 : rank < 4 ? 50 * kMs : -50 * kMs; }

// Every rank starts collective k at t0 + k·100 ms give or take 30 us (`late` 20 ms after), and all
// end together 1 ms after the last one started (give or take 4 us); each host writes its own clock.
Report job_with_skewed_clocks(JobDir& dir, int late) {
  std::vector<std::vector<std::string>> lines(kRanks);
  for (uint64_t k = 0; k < kColls; ++k) {
    std::vector<int64_t> start(kRanks);
    int64_t last = 0;
    for (int r = 0; r < kRanks; ++r) {
      const auto jitter_us = static_cast<int64_t>((r * 7 + k * 13) % 61) - 30;
      start[r] = static_cast<int64_t>(k) * 100 * kMs + jitter_us * 1000 + (r == late ? 20 * kMs : 0);
      last = std::max(last, start[r]);
    }
    for (int r = 0; r < kRanks; ++r) {
      const int64_t end = last + kMs + static_cast<int64_t>((r * 3 + k) % 5) * 1000;
      const auto on_host = [&](int64_t t) {
        return static_cast<uint64_t>(static_cast<int64_t>(kT0) + t + clock_of(r));
      };
      lines[r].push_back(coll(Coll{r, k, true, kCount, kRanks, on_host(start[r]), on_host(end)}));
    }
  }
  for (int r = 0; r < kRanks; ++r) dir.rank(r, host_of(r), lines[r]);
  return analyse(read_profiles({dir.path()}), nullptr);
}

void expect_offsets(const Report& r) {
  EXPECT_EQ(r.clocks.reference, "nodeA");
  ASSERT_EQ(r.clocks.offsets.size(), 2u);
  EXPECT_EQ(r.clocks.offsets[0].host, "nodeB");
  EXPECT_NEAR(static_cast<double>(r.clocks.offsets[0].offset_ns), 50.0 * kMs, 0.1 * kMs);
  EXPECT_EQ(r.clocks.offsets[0].collectives, kColls);
  EXPECT_EQ(r.clocks.offsets[1].host, "nodeC");
  EXPECT_NEAR(static_cast<double>(r.clocks.offsets[1].offset_ns), -50.0 * kMs, 0.1 * kMs);
  const std::string text = render_text(r);
  EXPECT_NE(text.find("nodeA            +0.000 ms (reference)"), std::string::npos) << text;
  EXPECT_NE(text.find("nodeB            +50.00"), std::string::npos) << text;
  EXPECT_NE(text.find("nodeC            -50.00"), std::string::npos) << text;
}

TEST(ReportClockOffsets, NamesTheTrueStragglerAfterAligningClocks) {
  JobDir dir("rs-clock-straggler");
  const Report r = job_with_skewed_clocks(dir, /*late=*/5);
  expect_offsets(r);
  EXPECT_EQ(r.straggler_summary.rfind("rank 5 arrived last in 20 of 20 collectives", 0), 0u)
      << r.straggler_summary;
  ASSERT_FALSE(r.stragglers.empty());
  EXPECT_NEAR(r.stragglers.front().mean_late_us, 20'000, 100);
}

TEST(ReportClockOffsets, HealthyTwinWithSkewedClocksNamesNoStraggler) {
  JobDir dir("rs-clock-healthy");
  const Report r = job_with_skewed_clocks(dir, /*late=*/-1);
  expect_offsets(r);
  EXPECT_EQ(r.straggler_summary, "") << render_text(r);
}

}  // namespace
}  // namespace railscope::report
