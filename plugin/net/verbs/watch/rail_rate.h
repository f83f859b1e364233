// SPDX-License-Identifier: Apache-2.0
// A port's large-transfer rate accumulator (railscope/node/rail_skew.h says why time, not bytes, shows a
// slow rail). Every connection on the port adds each large send it completes, from the thread that
// drives it: bytes, one transfer, and the part of [posted, completed] not yet counted as busy — the
// port's busy time is the union of its transfers' intervals (completions arrive in time order, so
// keeping the latest end seen is enough; one in the rare out-of-order case counts a little short).
// Lock-free (relaxed atomics, one compare-exchange loop that retries only when two threads complete
// on the same port at once), no allocation, no system call. The fabric sampler reads the totals once
// a second and differences them per window.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace railscope::net::verbs {

class RailRateAccumulator {
 public:
  struct Totals {
    uint64_t bytes = 0;
    uint64_t busy_ns = 0;
    uint64_t transfers = 0;
    Totals since(const Totals& earlier) const {
      return {bytes - earlier.bytes, busy_ns - earlier.busy_ns, transfers - earlier.transfers};
    }
  };

  // A transfer of `bytes` in flight from `start_ns` to `end_ns` (steady clock, ns).
  void add(uint64_t bytes, int64_t start_ns, int64_t end_ns) {
    bytes_.fetch_add(bytes, std::memory_order_relaxed);
    transfers_.fetch_add(1, std::memory_order_relaxed);
    int64_t mark = busy_until_.load(std::memory_order_relaxed);
    while (mark < end_ns && !busy_until_.compare_exchange_weak(mark, end_ns, std::memory_order_relaxed)) {
    }
    if (mark >= end_ns) return;  // inside time already counted
    busy_.fetch_add(static_cast<uint64_t>(end_ns - std::max(start_ns, mark)), std::memory_order_relaxed);
  }

  Totals totals() const {
    return {bytes_.load(std::memory_order_relaxed), busy_.load(std::memory_order_relaxed),
            transfers_.load(std::memory_order_relaxed)};
  }

 private:
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint64_t> busy_{0};
  std::atomic<uint64_t> transfers_{0};
  std::atomic<int64_t> busy_until_{0};
};

}  // namespace railscope::net::verbs
