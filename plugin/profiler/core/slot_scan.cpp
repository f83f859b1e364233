// SPDX-License-Identifier: Apache-2.0
#include "plugin/profiler/core/slot_scan.h"

#include "plugin/profiler/core/clock.h"

namespace railscope::profiler {

SlotStamps read_stamps(const CollSlot& s) {
  SlotStamps t;
  t.candidate_ns = s.candidate_ns.load(std::memory_order_acquire);
  t.alive = s.alive.load(std::memory_order_acquire);
  t.stopped = s.stopped.load(std::memory_order_acquire);
  t.stop_ns = s.stop_ns.load(std::memory_order_acquire);
  t.children_seen = s.children_seen.load(std::memory_order_acquire);
  t.start_ns = s.start_ns;  // written before the slot's kind was published
  t.hang_reported = s.hang_reported;
  return t;
}

SlotAction scan_action(const SlotStamps& s, uint64_t now, const ScanRules& rules) {
  const bool done = s.candidate_ns != 0 && s.alive == 0;
  if (done && (rules.force || elapsed_ns(now, s.candidate_ns) >= rules.grace_ns))
    return SlotAction::WriteComplete;
  if (rules.force) return SlotAction::WriteIncomplete;
  // Without KernelCh events an op with no proxy work (e.g. intra-node) never gets a child: written
  // with enqueue timing rather than reported as a hang.
  if (!rules.tracks_kernel && s.stopped && s.stop_ns != 0 && s.children_seen == 0 &&
      elapsed_ns(now, s.stop_ns) >= rules.childless_ns)
    return SlotAction::WriteComplete;
  if (!s.hang_reported && elapsed_ns(now, s.start_ns) >= rules.hang_ns) return SlotAction::ReportHang;
  return SlotAction::Keep;
}

}  // namespace railscope::profiler
