// SPDX-License-Identifier: Apache-2.0
// How deep the eager protocol's queues are (eager.h), derived from what the protocol lets be in flight
// on one connection rather than from the worst case its bookkeeping could index:
//   - ring messages: at most kRingMessages (credits);
//   - large messages (request-to-send, then data): at most kMaxLargeInFlight per connection. The sender
//     answers "call again" (request NULL) beyond it; the receiver holds back a clear-to-send while as
//     many large messages are already coming to it, so a data part always finds a standing receive;
//   - the receiver's control writes (clear-to-sends, credits): at most kControlDepth in its send queue.
//     A write that finds the queue full waits in this end's bookkeeping (ControlWindow) until a
//     signalled one completes.
// Every queue is thus sized by a count the engine enforces, never by what the peer or NCCL happens to
// do. rxe (and mlx5) round a queue up to a power of two with one slot spare, so the depths are
// 2^k - 1: 127 work requests occupy 128 slots where 129 would occupy 256.
// docs/net-protocol.md "Memory per connection" gives the bytes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "plugin/net/verbs/eager/eager.h"
#include "railscope/nccl/net.h"

namespace railscope::net::verbs::eager {

// NCCL keeps at most NCCL_NET_MAX_REQUESTS requests in flight per comm (its net plugin contract,
// include/railscope/nccl/net.h); more large messages than that on one connection wait for a call again.
inline constexpr uint32_t kMaxLargeInFlight = NCCL_NET_MAX_REQUESTS;
static_assert(kMaxLargeInFlight == kMailboxEntries, "a large message holds one mailbox entry");

// Sender, send queue (QP 0 carries the most): every ring write not yet retired by a signalled
// completion, one data part per large message in flight, and closeSend's zero-byte write.
inline constexpr uint32_t kSenderSendDepth = 127;
inline constexpr uint32_t kSenderSendNeed = static_cast<uint32_t>(kRingMessages) + kMaxLargeInFlight + 1;
static_assert(kSenderSendNeed <= kSenderSendDepth);

// Receiver, standing receives per QP: ring messages in flight (QP 0), data parts in flight (one per
// large message per QP), and those consumed but not yet given back (fewer than a batch).
inline constexpr uint32_t kReceiverRecvDepth = 127;
inline constexpr uint32_t kReceiverRecvNeed =
    static_cast<uint32_t>(kRingMessages) + kMaxLargeInFlight + static_cast<uint32_t>(kRepostBatch - 1);
static_assert(kReceiverRecvNeed <= kReceiverRecvDepth);

// Receiver, send queue: control writes posted and not yet retired (ControlWindow enforces it). One in
// kSignalEvery is signalled, so a full window always holds a signalled write whose completion frees it.
inline constexpr uint32_t kControlDepth = 63;
static_assert(kControlDepth >= kSignalEvery);
// Each control write is staged in a slot of its own until it leaves the send queue: one slot more
// than the writes the queue may hold, used round robin by write sequence number.
inline constexpr size_t kControlSlots = kControlDepth + 1;
inline constexpr size_t kControlSlotBytes = 64;  // a clear-to-send, or the 8-byte credit word
static_assert(kControlSlotBytes == sizeof(ClearToSend));

// Clear-to-sends written ahead by one receive (a grouped one) go as one RDMA write while each entry
// follows the previous one in the sender's region (entries are taken in turn: AheadEntries) and its
// control write's staging slot follows the previous one's here (slots are used in turn, wrapping at
// kControlSlots): the bytes are then contiguous at both ends. The sender reads each 64-byte entry on
// its own, as it would from a write of one entry.
inline constexpr bool ahead_adjoins(uint32_t entry, uint64_t seq, uint32_t next_entry, uint64_t next_seq) {
  return next_entry == entry + 1 && next_entry < kAheadEntries && next_seq == seq + 1 &&
         next_seq % kControlSlots != 0;
}

// Completion queue entries per lane: every work request its QPs can hold may complete before a poll.
inline constexpr int cq_depth(size_t qps_per_lane) {
  const size_t per_qp = std::max<size_t>(kSenderSendDepth, kControlDepth) + kReceiverRecvDepth;
  return static_cast<int>(std::max<size_t>(qps_per_lane, 1) * per_qp);
}

// The receiver's control writes in its send queue: posted ones are retired (their slots free again)
// when a signalled one's completion is polled, which retires every write posted before it too.
class ControlWindow {
 public:
  explicit ControlWindow(uint32_t depth = kControlDepth) : depth_(depth) {}
  bool has_room() const { return posted_ - retired_ < depth_; }
  // The sequence number of the write about to be posted (1, 2, 3 ...) and whether it is signalled.
  uint64_t next() const { return posted_ + 1; }
  static bool signalled(uint64_t seq) { return seq % kSignalEvery == 0; }
  void posted(uint64_t seq) { posted_ = seq; }
  // A signalled write completed; false when no such write was posted (a completion out of thin air).
  bool retire(uint64_t seq) {
    if (seq > posted_ || !signalled(seq)) return false;
    retired_ = std::max(retired_, seq);
    return true;
  }
  uint64_t outstanding() const { return posted_ - retired_; }

 private:
  uint32_t depth_;
  uint64_t posted_ = 0;
  uint64_t retired_ = 0;
};

}  // namespace railscope::net::verbs::eager
