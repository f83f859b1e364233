// SPDX-License-Identifier: Apache-2.0
// Per (operation, size bucket) statistics kept by the monitor thread: counts, busbw and latency
// histograms on fixed log-spaced bins. They feed the finalize summary and the Prometheus textfile.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <utility>

#include "plugin/profiler/core/bandwidth.h"

namespace railscope::profiler {

// Upper bounds of the histogram bins (Prometheus `le`), last one is +Inf.
inline constexpr std::array<double, 12> kBusbwBinsGbs = {1,   2,   5,   10,  20,   50,
                                                         100, 200, 400, 800, 1600, 1e300};
inline constexpr std::array<double, 14> kLatencyBinsUs = {10,   20,   50,    100,   200,    500, 1000,
                                                          2000, 5000, 10000, 50000, 200000, 1e6, 1e300};

// Power-of-two size bucket: floor(log2(bytes)); 0 for 0 or 1 byte.
int size_bucket(uint64_t bytes);

struct OpSizeStats {
  uint64_t count = 0;
  double busbw_sum = 0.0;
  double time_sum_us = 0.0;
  double busbw_min = 0.0;
  double busbw_max = 0.0;
  std::array<uint64_t, kBusbwBinsGbs.size()> busbw_bins{};
  std::array<uint64_t, kLatencyBinsUs.size()> latency_bins{};

  void add(double busbw_gbs, double time_us);
  void merge(const OpSizeStats& other);
  double busbw_quantile(double q) const;  // approximate: upper bound of the bin holding q
};

using StatsKey = std::pair<Op, int>;  // (op, size bucket)
using StatsTable = std::map<StatsKey, OpSizeStats>;

}  // namespace railscope::profiler
