// SPDX-License-Identifier: Apache-2.0
// Link outliers per rail (see link_stats.h).
#include "link_stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace railscope::preflight {
namespace {

constexpr size_t kMajority = 3;  // links needed before a median names an outlier

bool same_rate(double a, double b) { return std::fabs(a - b) <= 0.01 * std::max(a, b); }

}  // namespace

std::string gbps_text(double v) { return v >= 10 ? fmt::format("{:.1f}", v) : fmt::format("{:.3g}", v); }

std::string link_name(const LinkMeasurement& m) {
  return fmt::format("{}/{} → {}/{}", m.src_node, m.src_nic, m.dst_node, m.dst_nic);
}

LinkVerdict judge_links(const std::vector<LinkMeasurement>& links, const LinkPolicy& policy) {
  LinkVerdict v;
  std::map<int, std::vector<const LinkMeasurement*>> by_rail;
  for (const auto& l : links) by_rail[l.rail].push_back(&l);

  std::map<int, RailStats> stats;
  for (const auto& [rail, list] : by_rail) {
    RailStats s;
    s.rail = rail;
    std::vector<double> bw;
    std::vector<double> lat;
    for (const auto* l : list) {
      if (!l->error.empty()) continue;
      bw.push_back(l->GBps);
      if (l->lat_us > 0) lat.push_back(l->lat_us);
      if (s.line_GBps == 0 && l->line_GBps > 0) s.line_GBps = l->line_GBps;
    }
    s.links = bw.size();
    s.median_GBps = median(bw);
    s.median_lat_us = median(lat);
    if (s.links >= kMajority) {
      s.reference_GBps = s.median_GBps;
      s.reference = "rail";
    } else {
      // Too few links on this rail for a majority: the median of every rail at the same line rate.
      std::vector<double> peers;
      for (const auto& l : links)
        if (l.error.empty() && l.line_GBps > 0 && same_rate(l.line_GBps, s.line_GBps))
          peers.push_back(l.GBps);
      if (s.line_GBps > 0 && peers.size() >= kMajority) {
        s.reference_GBps = median(peers);
        s.reference = "all rails at this line rate";
      }
    }
    stats[rail] = s;
  }

  for (size_t li = 0; li < links.size(); ++li) {
    const LinkMeasurement& l = links[li];
    const RailStats& s = stats[l.rail];
    if (!l.error.empty()) {
      v.findings.push_back(
          diag::make("link.failed", fmt::format("{} (rail {}): {}", link_name(l), l.rail, l.error)));
      v.finding_link.push_back(li);
      continue;
    }
    const double line_pct = l.line_GBps > 0 ? 100.0 * l.GBps / l.line_GBps : -1;
    const bool below_median =
        s.reference_GBps > 0 && l.GBps < policy.slow_fraction_of_median * s.reference_GBps;
    const bool below_line =
        line_pct >= 0 && policy.min_line_percent > 0 && line_pct < policy.min_line_percent;
    if (below_median || below_line) {
      std::string detail = fmt::format("{}: {} GB/s", link_name(l), gbps_text(l.GBps));
      if (line_pct >= 0)
        detail += fmt::format(", {:.0f} % of line rate ({} GB/s)", line_pct, gbps_text(l.line_GBps));
      if (s.reference == "rail")
        detail += fmt::format(", median of rail {} is {} GB/s", l.rail, gbps_text(s.reference_GBps));
      else if (!s.reference.empty())
        detail += fmt::format(" on rail {}, median of {} is {} GB/s", l.rail, s.reference,
                              gbps_text(s.reference_GBps));
      else
        detail +=
            fmt::format(" on rail {} ({} link(s): no majority, compared with line rate)", l.rail, s.links);
      if (l.src_counters || l.dst_counters)
        detail += "; " + counters_note(l.src_node + "/" + l.src_nic, l.src_counters,
                                       l.dst_node + "/" + l.dst_nic, l.dst_counters);
      v.findings.push_back(diag::make("link.slow", detail));
      v.finding_link.push_back(li);
      v.slow.push_back(li);
    }
    if (s.links >= kMajority && s.median_lat_us > 0 &&
        l.lat_us > policy.high_latency_factor * s.median_lat_us) {
      v.high_latency.push_back(li);
      v.findings.push_back(
          diag::make("link.high_latency", fmt::format("{}: {:.1f} µs, median of rail {} is {:.1f} µs",
                                                      link_name(l), l.lat_us, l.rail, s.median_lat_us)));
      v.finding_link.push_back(li);
    }
  }
  for (auto& [rail, s] : stats) v.rails.push_back(s);
  return v;
}

}  // namespace railscope::preflight
