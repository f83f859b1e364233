// SPDX-License-Identifier: Apache-2.0
// Which nodes measure their links to which, round by round. In a round every node is in at most one pair
// (exactly one when the node count is even), so a round's pairs run at once without sharing a NIC.
//
// Default (O(log N) rounds): the ring first — (0,1),(2,3),… then (1,2),(3,4),…,(N−1,0), and for odd N a third
// round with (N−1,0) and pairs across the ring — so every node meets both neighbours and a slow NIC shows on
// two links; then shifted pairings from the round-robin tournament below, rounds 1, 2, 4, 8, … of it, which
// pair nodes far apart in rank order (other leaf switches on a rail-optimised fabric).
// --full: the round-robin tournament ("circle method"): node N'−1 fixed, the others rotating, with
// N' = N rounded up to even (for odd N the partner of the extra node sits the round out); N'−1 rounds
// cover every pair exactly once.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace railscope::preflight {

using Pair = std::pair<int, int>;  // first < second
using Round = std::vector<Pair>;

// Partner of `node` in round `r` (0 ≤ r < N'−1) of the circle method over n nodes; -1 when it sits out.
int circle_partner(int n, int r, int node);
// Rounds of the circle method: N'−1.
int circle_rounds(int n);

std::vector<Round> ring_rounds(int n);
std::vector<Round> pairing_schedule(int n, bool full);

}  // namespace railscope::preflight
