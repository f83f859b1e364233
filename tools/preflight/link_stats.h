// SPDX-License-Identifier: Apache-2.0
// Judging measured links: each link against its line rate and against the median of its rail.
// A median needs a majority: with fewer than three measured links on a rail (two nodes: one pair, two
// directions) the rail's links are compared with the median of every link of the same line rate on all
// rails when there are three or more of those, and always with the line rate.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "link_counters.h"
#include "railscope/core/diagnosis.h"
#include "railscope/core/median.h"

namespace railscope::preflight {

struct LinkMeasurement {
  int rail = 0;
  std::string src_node, src_nic;     // the sender
  std::string dst_node, dst_nic;     // the receiver
  int src_rank = -1, dst_rank = -1;  // the two ends' ranks (the verdict sends a finding to both)
  double GBps = 0;                   // 10^9 bytes/s, sender -> receiver
  double line_GBps = 0;              // nominal line rate of the slower end; 0 = unknown
  double lat_us = 0;                 // half round trip (p50); 0 = not measured
  std::string error;                 // non-empty: the measurement failed, GBps is meaningless
  bool slow = false;                 // judged link.slow (set by add_links from LinkVerdict::slow)
  bool high_latency = false;         // judged link.high_latency
  // The counters of the sender's and the receiver's port over the test (none: not sampled). A slow
  // link's finding says what they show.
  std::optional<EndCounters> src_counters, dst_counters;
};

struct LinkPolicy {
  double slow_fraction_of_median = 0.75;  // below this × the reference median: slow
  double min_line_percent = 60;           // below this % of line rate: slow (0 = off)
  double high_latency_factor = 4;         // latency above this × the rail's median latency: a warning
};

struct RailStats {
  int rail = 0;
  size_t links = 0;           // measured (failed ones not counted)
  double median_GBps = 0;     // of this rail's links; 0 when none
  double reference_GBps = 0;  // the median a link is compared with; 0 = none (too few links)
  std::string reference;      // "rail" / "all rails at this line rate" / "" (none)
  double line_GBps = 0;       // of the rail's first link with a known line rate
  double median_lat_us = 0;
};

struct LinkVerdict {
  std::vector<RailStats> rails;         // by rail index
  std::vector<diag::Finding> findings;  // link.slow, link.failed, link.high_latency
  std::vector<size_t> finding_link;     // per finding: the index of the judged link it is about
  std::vector<size_t> slow;             // indices into the judged links: link.slow
  std::vector<size_t> high_latency;     // link.high_latency
};

using core::median;  // 0 for none; mean of the middle two for an even count
LinkVerdict judge_links(const std::vector<LinkMeasurement>& links, const LinkPolicy& policy);

// "node07/mlx5_3 → node12/mlx5_3"
std::string link_name(const LinkMeasurement& m);
// A rate in GB/s as the verdict and the page print it: one decimal from 10, else three digits.
std::string gbps_text(double v);

}  // namespace railscope::preflight
