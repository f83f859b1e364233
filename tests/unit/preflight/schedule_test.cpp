// SPDX-License-Identifier: Apache-2.0
// Pairing schedules for 2..4,096 nodes (tools/preflight/schedule.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "schedule.h"

namespace railscope::preflight {
namespace {

// Every pair valid and ordered, every node at most once per round, exactly once when n is even.
void expect_matchings(int n, const std::vector<Round>& rounds, bool perfect_when_even) {
  std::vector<int> seen(static_cast<size_t>(n), -1);
  for (size_t r = 0; r < rounds.size(); ++r) {
    int busy = 0;
    for (const auto& [a, b] : rounds[r]) {
      ASSERT_TRUE(0 <= a && a < b && b < n) << "n=" << n << " round " << r << " pair " << a << "," << b;
      ASSERT_NE(seen[size_t(a)], int(r)) << "n=" << n << " round " << r << ": node " << a << " twice";
      ASSERT_NE(seen[size_t(b)], int(r)) << "n=" << n << " round " << r << ": node " << b << " twice";
      seen[size_t(a)] = seen[size_t(b)] = int(r);
      busy += 2;
    }
    if (perfect_when_even && n % 2 == 0) {
      ASSERT_EQ(busy, n) << "n=" << n << " round " << r << " leaves a node idle";
    }
    if (n % 2 == 1 && n > 3 && perfect_when_even) {
      ASSERT_EQ(busy, n - 1) << "n=" << n << " round " << r;
    }
  }
}

// Every pair of the n nodes exactly once.
void expect_all_pairs_once(int n, const std::vector<Round>& rounds) {
  std::vector<uint8_t> hit(size_t(n) * size_t(n), 0);
  size_t pairs = 0;
  for (const auto& round : rounds)
    for (const auto& [a, b] : round) {
      ASSERT_EQ(hit[size_t(a) * size_t(n) + size_t(b)]++, 0)
          << "n=" << n << ": pair " << a << "," << b << " twice";
      ++pairs;
    }
  ASSERT_EQ(pairs, size_t(n) * size_t(n - 1) / 2) << "n=" << n;
}

int log2_ceil(int n) { return int(std::ceil(std::log2(double(n)))); }

TEST(Schedule, DefaultEveryNodeCountUpTo4096) {
  for (int n = 2; n <= 4096; ++n) {
    const auto rounds = pairing_schedule(n, false);
    // The ring's rounds are perfect for even n; the circle rounds too.
    expect_matchings(n, rounds, n != 3);
    if (::testing::Test::HasFatalFailure()) return;
    ASSERT_LE(int(rounds.size()), 3 + log2_ceil(n)) << "n=" << n;
    // Every node meets both ring neighbours.
    std::vector<int> ring_links(size_t(n), 0);
    for (const auto& round : rounds)
      for (const auto& [a, b] : round)
        if (b - a == 1 || (a == 0 && b == n - 1)) ++ring_links[size_t(a)], ++ring_links[size_t(b)];
    for (int i = 0; i < n; ++i)
      ASSERT_GE(ring_links[size_t(i)], n == 2 ? 1 : 2) << "n=" << n << " node " << i;
  }
  for (int n : {2, 3, 4, 16, 100, 512, 1000, 4096})
    std::printf("n=%d: %zu default rounds, %d with --full\n", n, pairing_schedule(n, false).size(),
                int(pairing_schedule(n, true).size()));
}

TEST(Schedule, FullCoversEveryPairOnce) {
  // Exhaustively for every n up to 512, and for the larger sizes around powers of two up to 4,096
  // (every n to 4,096 would visit 10^10 pairs); the round counts and the partner function for all.
  for (int n = 2; n <= 512; ++n) {
    const auto rounds = pairing_schedule(n, true);
    ASSERT_EQ(int(rounds.size()), n % 2 == 0 ? n - 1 : n) << "n=" << n;
    expect_matchings(n, rounds, true);
    expect_all_pairs_once(n, rounds);
    if (::testing::Test::HasFatalFailure()) return;
  }
  for (int n : {1000, 1023, 1024, 1025, 2047, 2048, 4095, 4096}) {
    const auto rounds = pairing_schedule(n, true);
    ASSERT_EQ(int(rounds.size()), n % 2 == 0 ? n - 1 : n) << "n=" << n;
    expect_matchings(n, rounds, true);
    expect_all_pairs_once(n, rounds);
    if (::testing::Test::HasFatalFailure()) return;
  }
  for (int n = 513; n <= 4096; ++n) {
    const int k = circle_rounds(n);
    ASSERT_EQ(k, n % 2 == 0 ? n - 1 : n);
    for (int r : {0, 1, k / 2, k - 1})
      for (int i = 0; i < n; ++i) {
        const int p = circle_partner(n, r, i);
        if (p < 0) {
          ASSERT_EQ(n % 2, 1) << "n=" << n << " round " << r << ": node " << i << " idle";
          continue;
        }
        ASSERT_NE(p, i);
        ASSERT_EQ(circle_partner(n, r, p), i) << "n=" << n << " round " << r;
      }
  }
}

TEST(Schedule, SmallCasesSpelledOut) {
  EXPECT_EQ(pairing_schedule(1, false).size(), 0u);
  EXPECT_EQ(pairing_schedule(2, false), (std::vector<Round>{{{0, 1}}}));
  EXPECT_EQ(pairing_schedule(2, true), (std::vector<Round>{{{0, 1}}}));
  EXPECT_EQ(ring_rounds(4), (std::vector<Round>{{{0, 1}, {2, 3}}, {{1, 2}, {0, 3}}}));
  EXPECT_EQ(ring_rounds(5), (std::vector<Round>{{{0, 1}, {2, 3}}, {{1, 2}, {3, 4}}, {{0, 4}, {1, 2}}}));
  EXPECT_EQ(ring_rounds(7).back(), (Round{{0, 6}, {1, 3}, {2, 4}}));
}

}  // namespace
}  // namespace railscope::preflight
