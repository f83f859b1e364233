#include "plugin/profiler/core/hang_report.h"

#include <fmt/format.h>

#include <cstring>

#include "plugin/profiler/core/clock.h"
#include "railscope/nccl/profiler.h"

namespace railscope::profiler {

const char* state_name(uint8_t state) {
  switch (state) {
    case ncclProfilerProxyOpSendPosted: return "SendPosted";
    case ncclProfilerProxyOpSendRemFifoWait: return "SendRemFifoWait";
    case ncclProfilerProxyOpSendTransmitted: return "SendTransmitted";
    case ncclProfilerProxyOpSendDone: return "SendDone";
    case ncclProfilerProxyOpRecvPosted: return "RecvPosted";
    case ncclProfilerProxyOpRecvReceived: return "RecvReceived";
    case ncclProfilerProxyOpRecvTransmitted: return "RecvTransmitted";
    case ncclProfilerProxyOpRecvDone: return "RecvDone";
    case ncclProfilerProxyStepSendGPUWait: return "SendGPUWait";
    case ncclProfilerProxyStepSendWait: return "SendWait";
    case ncclProfilerProxyStepRecvWait: return "RecvWait";
    case ncclProfilerProxyStepRecvFlushWait: return "RecvFlushWait";
    case ncclProfilerProxyStepRecvGPUWait: return "RecvGPUWait";
    case ncclProfilerProxyStepSendPeerWait_v4: return "SendPeerWait";
    default: return "Idle";
  }
}

const char* state_meaning(uint8_t state) {
  switch (state) {
    case ncclProfilerProxyStepSendPeerWait_v4:
    case ncclProfilerProxyOpSendRemFifoWait:
    case ncclProfilerProxyStepRecvWait:
    case ncclProfilerProxyOpRecvPosted: return "peer_late_or_dead";
    case ncclProfilerProxyStepSendWait:
    case ncclProfilerProxyOpSendTransmitted:
    case ncclProfilerProxyStepRecvFlushWait: return "network_path";
    case ncclProfilerProxyStepSendGPUWait:
    case ncclProfilerProxyStepRecvGPUWait: return "local_gpu";
    default: return "unknown";
  }
}

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
    w.since_ns = now > since ? now - since : 0;
    w.meaning = state_meaning(st);
    out.push_back(std::move(w));
  }
  return out;
}

std::string hang_detail(const CollSlot& s, uint64_t bytes, int rank, uint64_t now,
                        const std::vector<WaitingOp>& waiting) {
  std::string d = fmt::format("{} seq {} ({} B, {} channels) in flight for {:.0f} s on rank {}",
                              op_name(s.op), s.seq, bytes, s.channels, ns_to_s(now - s.start_ns), rank);
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
    const char* why = "";
    if (w.meaning == std::string("peer_late_or_dead"))
      why = w.is_send ? "no clear-to-send from the peer: peer late or dead"
                      : "no data from the peer: peer late or dead";
    else if (w.meaning == std::string("network_path"))
      why = "posted but no completion: network path";
    else if (w.meaning == std::string("local_gpu"))
      why = "waiting on the local GPU kernel";
    else
      why = "between steps";
    d += fmt::format(" ch {} {} peer {}: {} for {:.1f} s ({});", w.channel,
                     w.is_send ? "send to" : "recv from", w.peer, w.state, ns_to_s(w.since_ns), why);
  }
  if (!d.empty() && d.back() == ';') d.pop_back();
  return d;
}

}  // namespace railscope::profiler
