// SPDX-License-Identifier: Apache-2.0
// Pairing schedules (see schedule.h).
#include "schedule.h"

#include <algorithm>

namespace railscope::preflight {

int circle_rounds(int n) { return n < 2 ? 0 : (n % 2 == 0 ? n - 1 : n); }

int circle_partner(int n, int r, int node) {
  const int m = n % 2 == 0 ? n : n + 1;  // with the extra node for odd n
  const int k = m - 1;                   // nodes that rotate
  if (n < 2 || node < 0 || node >= n || r < 0 || r >= k) return -1;
  int partner = 0;
  if (node == m - 1) {
    partner = r;
  } else if (node == r) {
    partner = m - 1;
  } else {
    // Rotating nodes i and j meet in round r when i + j ≡ 2r (mod k).
    partner = ((2 * r - node) % k + k) % k;
  }
  return partner < n ? partner : -1;
}

std::vector<Round> ring_rounds(int n) {
  std::vector<Round> rounds;
  if (n < 2) return rounds;
  if (n == 2) return {{{0, 1}}};
  Round even;
  Round odd;
  for (int i = 0; i + 1 < n; i += 2) even.emplace_back(i, i + 1);
  for (int i = 1; i + 1 < n; i += 2) odd.emplace_back(i, i + 1);
  if (n % 2 == 0) {
    odd.emplace_back(0, n - 1);  // closes the ring: n-1 is free in the odd round
    rounds = {even, odd};
  } else {
    // (0, n-1) closes the ring; the other nodes but n-2 pair up across the ring meanwhile.
    Round last{{0, n - 1}};
    const int h = (n - 3) / 2;
    for (int j = 1; j <= h; ++j) last.emplace_back(j, j + h);
    rounds = {even, odd, last};
  }
  return rounds;
}

static Round circle_round(int n, int r) {
  Round round;
  for (int i = 0; i < n; ++i) {
    const int p = circle_partner(n, r, i);
    if (p > i) round.emplace_back(i, p);
  }
  return round;
}

std::vector<Round> pairing_schedule(int n, bool full) {
  std::vector<Round> rounds;
  if (n < 2) return rounds;
  const int k = circle_rounds(n);
  if (full) {
    rounds.reserve(static_cast<size_t>(k));
    for (int r = 0; r < k; ++r) rounds.push_back(circle_round(n, r));
    return rounds;
  }
  rounds = ring_rounds(n);
  // Shifted pairings: rounds 1, 2, 4, … of the circle method (round 0 pairs 0 with N'-1 and mirrors
  // around 0, close to the ring already).
  for (int r = 1; r < k; r *= 2) {
    Round round = circle_round(n, r);
    // Skip a round that measures nothing new (small n, where the ring covered it).
    // The circle method's rounds are disjoint, so a round measures something new unless all its pairs
    // are ring neighbours (small n).
    const bool new_pair = std::any_of(round.begin(), round.end(), [n](const Pair& p) {
      return p.second - p.first != 1 && !(p.first == 0 && p.second == n - 1);
    });
    if (new_pair) rounds.push_back(std::move(round));
  }
  return rounds;
}

}  // namespace railscope::preflight
