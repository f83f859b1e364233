#include "plugin/profiler/core/slow_detector.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <string>

namespace railscope::profiler {

std::optional<diag::Finding> SlowDetector::feed(Op op, uint64_t bytes, double busbw_gbs, const char* proto) {
  if (cfg_.expected_gbs <= 0.0 || bytes < cfg_.min_bytes) return std::nullopt;
  if (busbw_gbs >= cfg_.fraction * cfg_.expected_gbs) {
    streak_ = 0;
    sum_busbw_ = 0.0;
    low_proto_ = 0;
    return std::nullopt;
  }
  ++streak_;
  sum_busbw_ += busbw_gbs;
  if (proto != nullptr && (std::strcmp(proto, "LL") == 0 || std::strcmp(proto, "LL128") == 0)) ++low_proto_;
  if (streak_ != cfg_.consecutive) return std::nullopt;

  const double mean = sum_busbw_ / streak_;
  const double ratio = mean / cfg_.expected_gbs;
  std::string causes;
  const char* id = "coll.slow";
  const int k = cfg_.rails;
  if (k >= 2 && std::fabs(ratio - static_cast<double>(k - 1) / k) <= 0.05) {
    id = "coll.slow.rail_down";
    causes += fmt::format("one of {} rails down (busbw ≈ {}/{} of the ceiling)", k, k - 1, k);
  }
  if (low_proto_ * 2 > streak_) {
    if (causes.empty()) id = "coll.slow.protocol";
    causes += fmt::format("{}protocol {} chosen for large messages", causes.empty() ? "" : "; ",
                          proto ? proto : "?");
  }
  if (ratio <= 0.5) {
    if (causes.empty()) id = "coll.slow.gdr_off";
    causes += fmt::format(
        "{}GPUDirect RDMA off or NIC far from the GPU (PCIe distance): data staged "
        "through host memory",
        causes.empty() ? "" : "; ");
  }
  if (causes.empty()) causes = "congestion, a slow peer, or a degraded link (see the wait matrix)";
  std::string detail = fmt::format(
      "{} busbw {:.1f} GB/s (mean of {} consecutive ops ≥ {} B) is {:.0f}% of the expected {:.1f} GB/s "
      "ceiling{}; likely: {}",
      op_name(op), mean, streak_, cfg_.min_bytes, ratio * 100.0, cfg_.expected_gbs,
      k > 0 ? fmt::format(" ({} rails)", k) : std::string(), causes);
  return diag::make(id, std::move(detail));
}

}  // namespace railscope::profiler
