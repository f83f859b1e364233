// SPDX-License-Identifier: Apache-2.0
#include "plugin/profiler/core/op_stats.h"

#include <bit>

namespace railscope::profiler {

int size_bucket(uint64_t bytes) { return bytes <= 1 ? 0 : static_cast<int>(std::bit_width(bytes)) - 1; }

void OpSizeStats::add(double busbw_gbs, double time_us) {
  if (count == 0 || busbw_gbs < busbw_min) busbw_min = busbw_gbs;
  if (count == 0 || busbw_gbs > busbw_max) busbw_max = busbw_gbs;
  ++count;
  busbw_sum += busbw_gbs;
  time_sum_us += time_us;
  for (size_t i = 0; i < kBusbwBinsGbs.size(); ++i)
    if (busbw_gbs <= kBusbwBinsGbs[i]) {
      ++busbw_bins[i];
      break;
    }
  for (size_t i = 0; i < kLatencyBinsUs.size(); ++i)
    if (time_us <= kLatencyBinsUs[i]) {
      ++latency_bins[i];
      break;
    }
}

void OpSizeStats::merge(const OpSizeStats& other) {
  if (other.count == 0) return;
  if (count == 0 || other.busbw_min < busbw_min) busbw_min = other.busbw_min;
  if (count == 0 || other.busbw_max > busbw_max) busbw_max = other.busbw_max;
  count += other.count;
  busbw_sum += other.busbw_sum;
  time_sum_us += other.time_sum_us;
  for (size_t i = 0; i < busbw_bins.size(); ++i) busbw_bins[i] += other.busbw_bins[i];
  for (size_t i = 0; i < latency_bins.size(); ++i) latency_bins[i] += other.latency_bins[i];
}

double OpSizeStats::busbw_quantile(double q) const {
  if (count == 0) return 0.0;
  const double target = q * static_cast<double>(count);
  uint64_t seen = 0;
  for (size_t i = 0; i < kBusbwBinsGbs.size(); ++i) {
    seen += busbw_bins[i];
    if (static_cast<double>(seen) >= target)
      return i + 1 < kBusbwBinsGbs.size() ? kBusbwBinsGbs[i] : busbw_max;
  }
  return busbw_max;
}

}  // namespace railscope::profiler
