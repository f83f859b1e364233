// SPDX-License-Identifier: Apache-2.0
// How deep the receiver-driven protocol's queues are (receiver_driven.h), derived from what the
// protocol lets be in flight on one connection rather than from the worst case its bookkeeping could
// index (eager_queues.h does the same for the eager protocol):
//   - receives: at most kFifoSlots per connection. The clear-to-send FIFO has that many slots and a
//     receive takes the next one, so an irecv that finds its slot still in use answers "call again";
//     each receive posts one zero-length receive per QP, consumed by its data's last write;
//   - the sender's data: a fully matched FIFO slot posts, per QP, one RDMA write per buffer with
//     bytes on that QP and at most one write with immediate, so at most nreqs + 1 work requests on
//     any QP. A SendBudget counts them per connection until the slot's last signalled completion is
//     polled, and the isend that would complete a slot beyond the budget answers "call again";
//   - the receiver's clear-to-sends: one RDMA write per receive on one of its QPs, signalled one in
//     kCtsSignalEvery per QP. A CtsWindow per QP counts those not yet retired, and an irecv whose QP's
//     window is full answers "call again" before it posts anything.
// NCCL itself keeps at most NCCL_NET_MAX_REQUESTS (32) requests in flight per comm, with a FIFO and
// queues of that size (NCCL's src/transport/net_ib.cc: MAX_REQUESTS, max_send_wr = 2 * MAX_REQUESTS),
// so the bounds cost NCCL nothing; a program that posts more gets "call again". Every queue is sized by
// a count the engine enforces, never by what the peer or NCCL happens to do. rxe and mlx5 round a queue
// up to a power of two with one slot spare, so the depths are 2^k - 1. The GPUDirect flush has its own
// loopback QP and CQ (gdr_flush_qp.h). docs/net-protocol.md "Memory per connection" gives the bytes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "railscope/nccl/net.h"

namespace railscope::net::verbs::receiver_driven {

// Clear-to-send slots in the sender's FIFO: receives in flight per connection (NCCL's FIFO is as deep).
inline constexpr uint32_t kFifoSlots = NCCL_NET_MAX_REQUESTS;
// Receive buffers per clear-to-send slot (NCCL_NET_IB_MAX_RECVS; connection.h's kMaxRecvs).
inline constexpr uint32_t kMaxBuffersPerSlot = 8;
// The receiver signals one clear-to-send write in this many on each QP.
inline constexpr uint32_t kCtsSignalEvery = 16;

// Whether a matched slot's sizes travel in a sizes record rather than in the immediate: several
// buffers, or a size the immediate's 31 bits cannot hold.
inline constexpr bool needs_sizes_record(size_t nreqs, size_t first_size) {
  return nreqs > 1 || first_size > static_cast<size_t>(INT32_MAX);
}
// The most work requests one fully matched slot of nreqs buffers posts on any one QP: a write per
// buffer whose part on that QP has bytes, and the write with immediate that ends the QP's part. Without
// a sizes record (one buffer) a QP's one data write carries the immediate: one work request.
inline constexpr uint32_t slot_work_requests(uint32_t nreqs, bool sizes_record) {
  return sizes_record ? nreqs + 1 : 1;
}

// Sender, send queue of each QP: work requests of fully matched slots whose completions are not all
// polled (SendBudget enforces it). 32 requests in flight, NCCL's most, need at most 48 (slots of two
// buffers, three work requests each) unless their messages exceed 2 GiB (a sizes record each: 64, and
// the 32nd such send waits for a completion).
inline constexpr uint32_t kSenderSendDepth = 63;
static_assert(slot_work_requests(kMaxBuffersPerSlot, true) <= kSenderSendDepth, "a full slot always fits");
// The sender posts no receives.
inline constexpr uint32_t kSenderRecvDepth = 1;

// Receiver, standing receives per QP: one per receive in flight.
inline constexpr uint32_t kReceiverRecvDepth = 63;
static_assert(kFifoSlots <= kReceiverRecvDepth);

// Receiver, send queue of each QP: clear-to-send writes posted and not yet retired (CtsWindow). A full
// window always holds a signalled write whose completion frees it.
inline constexpr uint32_t kCtsDepth = 63;
static_assert(kCtsDepth >= kCtsSignalEvery);

// Completion queue entries per lane: every work request its QPs can hold may complete before a poll
// (a QP in error flushes unsignalled ones too), at either end.
inline constexpr int cq_depth(size_t qps_per_lane) {
  const size_t per_qp = std::max<size_t>(kSenderSendDepth + kSenderRecvDepth, kCtsDepth + kReceiverRecvDepth);
  return static_cast<int>(std::max<size_t>(qps_per_lane, 1) * per_qp);
}

// The sender's work requests in flight: a slot's count is held from its posting until the last of
// its QPs' signalled completions is polled (which retires every write posted before it on that QP).
// The count is the most any one QP carries, so it bounds each QP's send queue.
class SendBudget {
 public:
  SendBudget() = default;
  explicit SendBudget(uint32_t depth) : depth_(depth) {}
  // `wrs`: slot_work_requests of the slot.
  bool fits(uint32_t wrs) const { return in_flight_ + wrs <= depth_; }
  void posted(uint32_t wrs) { in_flight_ += wrs; }
  // A posted slot's completions are all polled; false when not that many are in flight.
  bool retired(uint32_t wrs) {
    if (wrs > in_flight_) return false;
    in_flight_ -= wrs;
    return true;
  }
  uint32_t in_flight() const { return in_flight_; }

 private:
  uint32_t depth_ = kSenderSendDepth;
  uint32_t in_flight_ = 0;
};

// The receiver's clear-to-send writes on one QP: the n-th (1, 2, 3 ...) is signalled when n is a
// multiple of kCtsSignalEvery. Completions come only for signalled writes and in posting order, so
// each one retires the oldest signalled write outstanding and every write before it.
class CtsWindow {
 public:
  CtsWindow() = default;
  explicit CtsWindow(uint32_t depth) : depth_(depth) {}
  bool has_room() const { return posted_ - retired_ < depth_; }
  // Whether the write about to be posted is signalled.
  bool next_signalled() const { return (posted_ + 1) % kCtsSignalEvery == 0; }
  void posted() { ++posted_; }
  // A signalled write's completion; false when no signalled write is outstanding (a completion out of
  // thin air).
  bool retire() {
    const uint64_t next = (retired_ / kCtsSignalEvery + 1) * kCtsSignalEvery;
    if (next > posted_) return false;
    retired_ = next;
    return true;
  }
  uint64_t outstanding() const { return posted_ - retired_; }

 private:
  uint32_t depth_ = kCtsDepth;
  uint64_t posted_ = 0;
  uint64_t retired_ = 0;
};

}  // namespace railscope::net::verbs::receiver_driven
