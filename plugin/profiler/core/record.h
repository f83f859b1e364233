// SPDX-License-Identifier: Apache-2.0
// A finished collective or p2p as written to the profile (docs/profile-format.md), built by the
// monitor thread from a CollSlot and its ProxyOps.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plugin/profiler/core/bandwidth.h"

namespace railscope::profiler {

struct WaitEntry {
  int channel = 0;
  int peer = -1;
  bool is_send = false;
  uint32_t steps = 0;
  uint64_t bytes = 0;
  uint64_t peer_ns = 0;
  uint64_t net_ns = 0;
  uint64_t gpu_ns = 0;
};

inline constexpr size_t kMaxWaitsPerRecord = 64;

struct CollRecord {
  bool is_p2p = false;
  Op op = Op::Unknown;
  const char* datatype = nullptr;
  const char* algo = nullptr;
  const char* proto = nullptr;
  uint64_t seq = 0;
  uint64_t ord = 0;  // `coll` only
  uint64_t count = 0;
  uint64_t bytes = 0;
  int root = -1;
  int peer = -1;
  int channels = 0;
  int rank = -1;
  int8_t graph = -1;
  uint64_t start_unix_ns = 0;
  uint64_t end_unix_ns = 0;
  std::optional<double> time_us;
  std::optional<double> algbw_gbs;
  std::optional<double> busbw_gbs;
  const char* timing = "enqueue";
  bool complete = true;
  std::vector<WaitEntry> waits;
  uint32_t waits_dropped = 0;
};

}  // namespace railscope::profiler
