// Slow-collective diagnosis: busbw below a fraction of the expected ceiling (NIC count × line rate,
// or RAILSCOPE_EXPECTED_BUSBW) for N consecutive large operations → one finding naming the likely
// causes (one rail down ≈ (k−1)/k of the ceiling, GPUDirect off / PCIe distance, protocol choice).
#pragma once

#include <cstdint>
#include <optional>

#include "plugin/profiler/core/bandwidth.h"
#include "railscope/core/diagnosis.h"

namespace railscope::profiler {

struct SlowConfig {           // expected_gbs/rails: RAILSCOPE_EXPECTED_* or the node's ports (node_ceiling.h)
  double expected_gbs = 0.0;  // 0 = unknown: never diagnose
  int rails = 0;              // NICs behind the ceiling; 0 = unknown
  double fraction = 0.8;      // busbw below fraction × ceiling counts as slow
  int consecutive = 5;
  uint64_t min_bytes = 16u << 20;  // smaller messages are latency-bound and not judged
};

class SlowDetector {
 public:
  SlowDetector() = default;
  explicit SlowDetector(SlowConfig c) : cfg_(c) {}
  // Feeds one finished operation; returns a finding when the streak reaches `consecutive`
  // (once per streak; a healthy op resets it).
  std::optional<diag::Finding> feed(Op op, uint64_t bytes, double busbw_gbs, const char* proto);
  const SlowConfig& config() const { return cfg_; }

 private:
  SlowConfig cfg_;
  int streak_ = 0;
  double sum_busbw_ = 0.0;
  int low_proto_ = 0;
};

}  // namespace railscope::profiler
