// SPDX-License-Identifier: Apache-2.0
// Rail skew (step 3 of the troubleshooting order): one rail slower than the others while the
// job runs. Byte counters cannot show it: a collective drives its rails in lockstep, so every rail moves
// the same bytes and the slow one only takes longer. What shows it is time: per rail (port), the rate of
// its large transfers while it was busy — bytes over the time at least one of them was in flight
// (post to completion, overlapping transfers counted once). A healthy rail moves at its link's pace; a
// rail behind a bad cable, a slow switch port or a congested leaf takes longer for the same bytes.
// Pure: the net plugin's sampler (plugin/net/verbs/watch/fabric_watch.h) feeds it each stats window's
// figures per port; unit-tested in tests/unit/net_fabric.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "railscope/core/diagnosis.h"

namespace railscope::node {

// A transfer counts towards its rail's rate from this size: below it a message's time is mostly
// latency (a few µs on any fabric), not the rail's pace.
inline constexpr uint64_t kRailRateMinMessageBytes = 64 * 1024;
// A rail is judged only when it carried enough in the window for its rate to mean something: this
// many large transfers and this much busy time (100 ms of busy time at 400 Gb/s is 5 GB).
inline constexpr uint64_t kRailSkewMinTransfers = 16;
inline constexpr uint64_t kRailSkewMinBusyNs = 100'000'000;
// Slow: below this fraction of the median rate of the other rails. Healthy rails differ by far less
// (soft-RoCE test bed, two rails driven by one process: docs/fabric-health-net.md gives the spread
// measured); a rail at half its siblings' pace holds the whole job at half speed.
inline constexpr double kRailSkewRatio = 0.5;
// ... and only when that cost the window this much: the slow rail's busy time beyond what its bytes take
// at the others' median pace, as a fraction of the window. Lockstep collectives wait that long on it, so
// it bounds how much the slow rail held the job back. A rail that is slow while mostly idle (an emulated
// NIC whose completions wait on a busy CPU, a job between collectives) holds back little; a rail behind a
// bad link is busy for most of the window (docs/fabric-health-net.md gives the test bed's figures).
inline constexpr double kRailSkewMinCost = 0.1;

// One rail's large transfers in a window.
struct RailRate {
  std::string port;  // "mlx5_1:1"
  uint64_t bytes = 0;
  uint64_t busy_ns = 0;
  uint64_t transfers = 0;
  // Bytes per second while busy (10^9 bytes per second = 1 GBps); 0 without busy time.
  double bytes_per_second() const {
    return busy_ns == 0 ? 0.0 : static_cast<double>(bytes) * 1e9 / static_cast<double>(busy_ns);
  }
  bool judgeable() const { return transfers >= kRailSkewMinTransfers && busy_ns >= kRailSkewMinBusyNs; }
};

// fabric.rail_skew when at least two rails carried enough traffic, the slowest of them runs below
// kRailSkewRatio of the median of the others and that cost at least kRailSkewMinCost of the window: names
// that rail, its rate, the others' median, bytes, transfers and busy time of each, the time it cost, and
// the fix. nullopt otherwise. `seconds`: the window's length.
std::optional<diag::Finding> rail_skew(const std::vector<RailRate>& rails, double seconds);
// The index in `rails` of the slowest judgeable rail when it runs below kRailSkewRatio of the median of
// the others (the rate rule alone: a whole run's totals have no window to weigh a cost against);
// nullopt otherwise.
std::optional<size_t> slow_rail(const std::vector<RailRate>& rails);
// Seconds of busy time `slow` took beyond what its bytes take at `others_bytes_per_second`; 0 when it
// took no longer.
double rail_skew_cost_seconds(const RailRate& slow, double others_bytes_per_second);

}  // namespace railscope::node
