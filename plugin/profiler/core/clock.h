// SPDX-License-Identifier: Apache-2.0
// One monotonic clock for every event (a single vDSO call); wall-clock times for the profile are
// derived with an offset taken once, so records of different nodes can be compared.
#pragma once

#include <time.h>

#include <cstdint>

namespace railscope::profiler {

inline uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Time from `since` to `now`, 0 when `since` is later. The monitor takes `now` once per scan while
// NCCL's threads keep stamping events, so an event can carry a time later than the scan's `now`: a
// plain `now - since` wraps to centuries there (a collective started during the scan read as a hang).
inline uint64_t elapsed_ns(uint64_t now, uint64_t since) { return now > since ? now - since : 0; }

inline double ns_to_us(uint64_t ns) { return static_cast<double>(ns) / 1e3; }
inline double ns_to_s(uint64_t ns) { return static_cast<double>(ns) / 1e9; }

// realtime − monotonic, measured at first use.
int64_t unix_offset_ns();
inline uint64_t to_unix_ns(uint64_t mono_ns) {
  return static_cast<uint64_t>(static_cast<int64_t>(mono_ns) + unix_offset_ns());
}

}  // namespace railscope::profiler
