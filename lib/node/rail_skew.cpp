// SPDX-License-Identifier: Apache-2.0
// The rail-skew judgement (rail_skew.h).
#include "railscope/node/rail_skew.h"

#include <fmt/format.h>

#include <algorithm>

#include "railscope/core/median.h"

namespace railscope::node {
namespace {

// "0.0142 GB/s" or "11.9 GB/s": three significant digits, 10^9 bytes per second.
std::string rate_text(double bytes_per_second) { return fmt::format("{:.3g} GB/s", bytes_per_second / 1e9); }

std::string figures(const RailRate& r) {
  return fmt::format("{} {} ({:.1f} MiB in {} transfers, busy {:.2f} s)", r.port,
                     rate_text(r.bytes_per_second()), static_cast<double>(r.bytes) / 1048576.0, r.transfers,
                     static_cast<double>(r.busy_ns) / 1e9);
}

}  // namespace

std::optional<size_t> slow_rail(const std::vector<RailRate>& rails) {
  std::vector<size_t> judged;
  for (size_t i = 0; i < rails.size(); ++i)
    if (rails[i].judgeable()) judged.push_back(i);
  if (judged.size() < 2) return std::nullopt;
  const size_t slow = *std::min_element(judged.begin(), judged.end(), [&](size_t a, size_t b) {
    return rails[a].bytes_per_second() < rails[b].bytes_per_second();
  });
  std::vector<double> others;
  for (size_t i : judged)
    if (i != slow) others.push_back(rails[i].bytes_per_second());
  if (!(rails[slow].bytes_per_second() < kRailSkewRatio * core::median(others))) return std::nullopt;
  return slow;
}

double rail_skew_cost_seconds(const RailRate& slow, double others_bytes_per_second) {
  if (!(others_bytes_per_second > 0)) return 0.0;
  const double at_their_pace = static_cast<double>(slow.bytes) / others_bytes_per_second;
  return std::max(0.0, static_cast<double>(slow.busy_ns) / 1e9 - at_their_pace);
}

std::optional<diag::Finding> rail_skew(const std::vector<RailRate>& rails, double seconds) {
  const std::optional<size_t> at = slow_rail(rails);
  if (!at || !(seconds > 0)) return std::nullopt;
  const RailRate& slow = rails[*at];
  std::vector<double> others;
  std::string others_text;
  for (size_t i = 0; i < rails.size(); ++i) {
    if (i == *at || !rails[i].judgeable()) continue;
    others.push_back(rails[i].bytes_per_second());
    others_text += (others_text.empty() ? "" : "; ") + figures(rails[i]);
  }
  const double med = core::median(others);
  const double cost = rail_skew_cost_seconds(slow, med);
  if (cost < kRailSkewMinCost * seconds) return std::nullopt;
  return diag::make(
      "fabric.rail_skew",
      fmt::format(
          "{}: large transfers (>= {} KiB) ran at {} while the other rails' median is {} ({:.2f}x) "
          "over {:.1f} s: {}; the others: {}. Collectives wait for the slowest rail: it took {:.2f} s "
          "({:.0f} % of the window) longer than the others' pace",
          slow.port, kRailRateMinMessageBytes / 1024, rate_text(slow.bytes_per_second()), rate_text(med),
          slow.bytes_per_second() / med, seconds, figures(slow), others_text, cost, 100.0 * cost / seconds),
      fmt::format("Check {}'s link, cable and switch port: `railscope doctor` (link section) on this node, "
                  "`railscope preflight` across the nodes (slow on every node: that rail's leaf switch; on "
                  "this node only: its cable, optic or NIC), and the switch port's error counters",
                  slow.port));
}

}  // namespace railscope::node
