// SPDX-License-Identifier: Apache-2.0
// Slow-collective diagnosis: busbw below a fraction of the communicator's expected busbw
// (comm_expectation.h, or RAILSCOPE_EXPECTED_BUSBW) for N consecutive large operations → one finding.
// A cause is named only with evidence: the net plugin's word that traffic is staged through host
// memory (GPUDirect off), busbw ≈ (k−1)/k of k ports (one rail down), LL/LL128 for large messages;
// otherwise "below expected" with the figures and the checks to make, in order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "plugin/profiler/core/bandwidth.h"
#include "railscope/core/diagnosis.h"

namespace railscope::profiler {

struct SlowConfig {  // expected_gbs/rails: RAILSCOPE_EXPECTED_* or the communicator's (comm_expectation.h)
  double expected_gbs = 0.0;  // 0 = unknown: never diagnose
  int rails = 0;              // ports behind expected_gbs; 0 = unknown
  std::string basis;          // how expected_gbs was derived, for the finding
  std::string gdr_evidence;   // non-empty: the process knows GPUDirect RDMA is off (what it knows)
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
