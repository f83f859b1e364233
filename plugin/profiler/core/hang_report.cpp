// SPDX-License-Identifier: Apache-2.0
#include "plugin/profiler/core/hang_report.h"

#include <fmt/format.h>

#include <cstring>

#include "plugin/profiler/core/clock.h"
#include "railscope/nccl/profiler.h"

namespace railscope::profiler {

std::vector<WaitingOp> collect_waiting(const CollSlot& s, uint64_t now) {
  std::vector<WaitingOp> out;
  for (const ProxyOpSlot* op = s.ops_head.load(std::memory_order_acquire); op != nullptr; op = op->next) {
    if (op->stopped.load(std::memory_order_relaxed)) continue;
    const uint8_t st = op->cur_state.load(std::memory_order_relaxed);
    const uint64_t since = op->cur_since_ns.load(std::memory_order_relaxed);
    WaitingOp w;
    w.channel = op->channel;
    w.peer = op->peer;
    w.is_send = op->is_send;
    w.state = state_name(st);
    w.since_ns = elapsed_ns(now, since);
    w.meaning = classify_wait(st);
    out.push_back(std::move(w));
  }
  return out;
}

StuckColl stuck_coll(const CollSlot& s, uint64_t bytes) {
  StuckColl out;
  if (s.h.kind.load(std::memory_order_acquire) == Kind::Coll) out.ord = s.ord;
  out.count = s.count;
  out.dtype = s.datatype;
  out.bytes = bytes;
  out.start_unix_ns = to_unix_ns(s.start_ns);
  return out;
}

std::string hang_detail(const CollSlot& s, uint64_t bytes, int rank, uint64_t now,
                        const std::vector<WaitingOp>& waiting) {
  std::string d =
      fmt::format("{} seq {} ({} B, {} channels) in flight for {:.0f} s on rank {}", op_name(s.op), s.seq,
                  bytes, s.channels, ns_to_s(elapsed_ns(now, s.start_ns)), rank);
  const int kstops = s.kernel_stops.load(std::memory_order_relaxed);
  if (kstops > 0) d += fmt::format("; kernel finished on {}/{} channels", kstops, s.channels);
  if (waiting.empty()) {
    d += s.children_seen.load(std::memory_order_relaxed) == 0
             ? "; no proxy or kernel activity seen for it: the operation never started on this rank's GPU "
               "(a peer rank may not have called it yet)"
             : "; no proxy operation is still waiting (the GPU kernel has not finished)";
    return d;
  }
  d += "; still waiting:";
  size_t shown = 0;
  for (const WaitingOp& w : waiting) {
    if (shown++ == 8) {
      d += fmt::format(" … and {} more", waiting.size() - 8);
      break;
    }
    const char* why = "between steps";
    switch (w.meaning) {
      case WaitKind::PeerLateOrDead:
        why = w.is_send ? "no clear-to-send from the peer: peer late or dead"
                        : "no data from the peer: peer late or dead";
        break;
      case WaitKind::NetworkPath: why = "posted but no completion: network path"; break;
      case WaitKind::LocalGpu: why = "waiting on the local GPU kernel"; break;
      case WaitKind::Unknown: break;
    }
    d += fmt::format(" ch {} {} peer {}: {} for {:.1f} s ({});", w.channel,
                     w.is_send ? "send to" : "recv from", w.peer, w.state, ns_to_s(w.since_ns), why);
  }
  if (!d.empty() && d.back() == ';') d.pop_back();
  return d;
}

}  // namespace railscope::profiler
