// SPDX-License-Identifier: Apache-2.0
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
  const auto add = [&](const char* cause_id, const std::string& cause) {
    if (causes.empty()) id = cause_id;
    causes += (causes.empty() ? "" : "; ") + cause;
  };
  if (!cfg_.gdr_evidence.empty()) add("coll.slow.gdr_off", cfg_.gdr_evidence);
  const int k = cfg_.rails;
  if (k >= 2 && std::fabs(ratio - static_cast<double>(k - 1) / k) <= 0.05)
    add("coll.slow.rail_down",
        fmt::format("one of {} rails down (busbw ≈ {}/{} of the expected)", k, k - 1, k));
  if (low_proto_ * 2 > streak_)
    add("coll.slow.protocol", fmt::format("protocol {} chosen for large messages", proto ? proto : "?"));
  std::string detail = fmt::format(
      "{} busbw {:.1f} GB/s (mean of {} consecutive ops ≥ {} B) is {:.0f}% of the expected {:.1f} GB/s{}{}; ",
      op_name(op), mean, streak_, cfg_.min_bytes, ratio * 100.0, cfg_.expected_gbs,
      k > 0 && (cfg_.basis.empty() || cfg_.basis == "RAILSCOPE_EXPECTED_BUSBW")
          ? fmt::format(" ({} rails)", k)
          : std::string(),
      cfg_.basis.empty() ? std::string() : fmt::format(" ({})", cfg_.basis));
  if (!causes.empty())
    detail += "likely: " + causes;
  else
    detail +=
        "below expected, no cause known to this process; check in order: GPUDirect RDMA (peer memory or "
        "DMA-BUF, `railscope doctor`), a rail down or degraded, the GPU-NIC PCIe distance (`nvidia-smi "
        "topo -m`), the protocol NCCL chose, congestion or a slow peer (the wait matrix)";
  return diag::make(id, std::move(detail));
}

}  // namespace railscope::profiler
