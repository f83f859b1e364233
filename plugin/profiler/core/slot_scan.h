// SPDX-License-Identifier: Apache-2.0
// What one scan of the monitor does with one collective or p2p slot: leave it, write its record
// (complete or not), or report it as a hang. A pure function of the slot's stamps and the scan's
// time, so that the orderings NCCL's threads and the monitor can race into are tested one by one.
#pragma once

#include <cstdint>

#include "plugin/profiler/core/events.h"

namespace railscope::profiler {

enum class SlotAction { Keep, WriteComplete, WriteIncomplete, ReportHang };

struct ScanRules {
  uint64_t grace_ns = 0;      // a completed collective waits this long for late children
  uint64_t childless_ns = 0;  // without KernelCh events: an op with no child written after this long
  uint64_t hang_ns = 0;       // RAILSCOPE_HANG_SECONDS
  bool tracks_kernel = false;
  bool force = false;  // the communicator is going away: write everything now
};

// The slot's stamps as one scan reads them (NCCL's threads may change them right after).
struct SlotStamps {
  uint64_t start_ns = 0;
  uint64_t stop_ns = 0;       // 0 until stop() has stored it, even after `stopped` reads true
  uint64_t candidate_ns = 0;  // 0 = not complete
  bool stopped = false;
  int alive = 0;
  int children_seen = 0;
  bool hang_reported = false;
};
SlotStamps read_stamps(const CollSlot& s);

// `now` was taken at the start of the scan: any stamp may be later than it.
SlotAction scan_action(const SlotStamps& s, uint64_t now, const ScanRules& rules);

}  // namespace railscope::profiler
