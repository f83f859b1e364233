// SPDX-License-Identifier: Apache-2.0
// The receiver-driven protocol (NCCL's own for IB): the receiver advertises each posted receive
// (address, rkeys, size, tag) by RDMA-writing a clear-to-send slot into the sender's FIFO; the sender
// matches a send to an entry of the oldest slot by tag and, when every entry of the slot is matched,
// RDMA-writes the data (large messages split across the connection's QPs), each QP's part ending with
// a signalled RDMA write with immediate that completes the receive. Sizes travel in the immediate
// (one buffer) or in a sizes record written into the receiver's sizes area (grouped receives).
// Used whenever one end carries GPU memory, or RAILSCOPE_NET_EAGER_MAX=0. What may be in flight, and
// so how deep each queue is, is bounded in receiver_driven_queues.h. Over a virtual NIC the traffic of
// a failed port moves to the others, and back once the port passes a probe (docs/failover.md;
// receiver_driven_failover.cpp); the clear-to-sends of such a connection all go on QP 0, the port that
// does not move.
#pragma once

#include <array>
#include <span>
#include <string>

#include "plugin/net/verbs/failover/failover_message.h"
#include "plugin/net/verbs/failover/port_probe.h"
#include "plugin/net/verbs/receiver_driven/receiver_driven_queues.h"
#include "plugin/net/verbs/receiver_driven/receiver_driven_targets.h"
#include "plugin/net/verbs/recv_comm.h"
#include "plugin/net/verbs/send_comm.h"

namespace railscope::net::verbs {

// One clear-to-send entry the receiver writes into the sender's FIFO (64 bytes, so one entry never
// straddles a cache line: one rkey for each of up to 8 devices). seq is the slot's sequence number + 1
// and is checked in every entry.
struct alignas(64) CtsEntry {
  uint64_t addr;
  uint64_t size;
  uint32_t rkey[kMaxDevsPerEnd];
  uint32_t nreqs;
  int32_t tag;
  uint64_t seq;
};
static_assert(sizeof(CtsEntry) == 64);
struct CtsSlot {
  CtsEntry e[kMaxRecvs];
};
using SizesSlot = std::array<int32_t, kMaxRecvs>;
// Clear-to-send slots: receives in flight per connection (receiver_driven_queues.h). A receive uses
// the receive comm's slot of the same index, and a send the request pool's entries.
inline constexpr int kCtsSlots = static_cast<int>(receiver_driven::kFifoSlots);
static_assert(kCtsSlots <= kFifoDepth, "the receive comm's slots");
static_assert(kSendRequests >= kMaxRecvs, "a whole slot's requests fit the pool");
static_assert(receiver_driven::kMaxBuffersPerSlot == kMaxRecvs);
// The FIFO is the whole of a receiver-driven sender's region (send_comm.h); an eager sender's region
// holds its mailbox instead.
inline constexpr size_t kFifoBytes = sizeof(CtsSlot) * kCtsSlots;

// Work requests a matched slot of buffers `sizes` posts on QP q of nqps (ReceiverDrivenSend::post): an
// RDMA write per buffer whose part (chunk_of) has bytes, and a write with immediate ending the part
// unless the slot's one data write carries the immediate itself.
inline uint32_t work_requests_on_qp(std::span<const size_t> sizes, size_t q, size_t nqps) {
  uint32_t parts = 0;
  for (size_t size : sizes) {
    size_t off = 0, len = 0;
    chunk_of(size, q, nqps, &off, &len);
    parts += len > 0 ? 1 : 0;
  }
  const bool data_carries_imm =
      !receiver_driven::needs_sizes_record(sizes.size(), sizes.empty() ? 0 : sizes[0]) && parts == 1;
  return parts + (data_carries_imm ? 0 : 1);
}

class ReceiverDrivenSend final : public SendProtocol {
 public:
  explicit ReceiverDrivenSend(VerbsSendComm& c) : c_(c) {}
  Status prepare() override;
  // Inlined into its sender, protocol_sender (send_comm.h), which NCCL's isend calls. This protocol's four
  // always_inline attributes are those its round trip measurably needs (bench/net_instructions/RESULTS.md).
  [[gnu::always_inline]] inline Status isend(void* data, size_t size, int tag, VerbsMr* mr, void* phandle,
                                             Request** out);
  // Called only by its requests' tester, protocol_tester (connection.h).
  [[gnu::always_inline]] inline ncclResult_t test(SendReq* req, int* done, int* sizes);
  Status on_completion(const ibv_wc& wc) override;
  // Failover (receiver_driven_failover.cpp), off the data path.
  bool on_port_lost(size_t lane) override;
  Status poll_notices() override;

 private:
  // The sender's copy of one clear-to-send slot (the FIFO is read once per slot, then only this).
  struct Slot {
    uint64_t seq = 0;  // CTS sequence number this slot state belongs to (0 = never used)
    int nreqs = 0;
    int matched = 0;
    int live_reqs = 0;  // requests handed to NCCL and not yet reported done
    int pending = 0;    // signalled completions still expected
    uint32_t wrs = 0;   // work requests posted on each QP at most (SendBudget)
    bool posted = false;
    bool held = false;   // failover: in flight when QPs failed, not reported done before the receiver's HELD
    uint64_t moved = 0;  // failover: the QPs whose parts live QPs carried when it was posted (moved_for)
    Connection::Clock::time_point posted_at{};
    // Striped connections: when each lane's parts completed (Connection::record_parts).
    Connection::Clock::time_point lane_done[kMaxDevsPerEnd]{};
    CtsTarget cts[kMaxRecvs]{};  // entries [0, nreqs) are this slot's
    SendReq* reqs[kMaxRecvs]{};
  };
  // Starts using slot s for clear-to-send slot `seq` of nreqs entries copied from the FIFO. Sets only
  // what this use reads: a whole Slot{} is ~600 bytes, written per message.
  static void reuse(Slot& s, uint64_t seq, uint32_t nreqs, const volatile CtsEntry* fifo);
  Status post(Slot& s, int slot_index);
  // A slot's writes are posted, `chains` of them signalled, the first at `posting` (read before its
  // post: send_comm.h SendReq::posted_at): its completions are awaited.
  void mark_posted(Slot& s, int chains, Connection::Clock::time_point posting);
  // on_completion()'s failures.
  Status failed_completion(const ibv_wc& wc) const;
  Status beyond_budget(size_t index) const;
  // Failover (receiver_driven_failover.cpp). The QPs whose parts live QPs carry for clear-to-send `seq`:
  // the failed ones, and those restored after the receiver posted that receive (it gave them none of its
  // standing receives). Nonzero: the slot takes post_moved.
  uint64_t moved_for(uint64_t seq) const { return failed_qps_ | (seq < resume_seq_ ? resumed_qps_ : 0); }
  // The work requests a matched slot posts on a live QP at most when `moved` QPs' parts move, and its
  // posting (each live QP also writes the parts of the moved QPs assigned to it).
  uint32_t moved_work_requests(uint32_t nreqs, uint64_t moved) const;
  Status post_moved(Slot& s, int slot_index);
  // A completion in error: true when it belongs to, or starts, a failover (the connection goes on).
  bool failover_absorbs(const ibv_wc& wc);
  bool start_failover(uint64_t mask, const std::string& cause);
  Status send_move_when_drained();
  Status poll_held();
  // Writes again on QP 0 the parts `parts` (bit q: part q, chunk_of) of held slot s, then the replayed
  // immediate.
  Status post_replay(Slot& s, int slot_index, uint64_t parts);
  // Recovery (failover/port_probe.h): the probe moved on, a probe write's completion, what a probe that
  // ended changes (`passed`: RESTORED goes), and the receiver's answer to RESTORED.
  Status probe_progress();
  Status on_probe_done(size_t q, bool ok);
  Status probe_ended(bool passed);
  Status poll_resume();
  // Where an exchange with the receiver stands: kDraining (QPs stopped, waiting for every write posted
  // to complete here before MOVE), kAwaitingHeld (MOVE sent), kProbe (probe_ in progress),
  // kAwaitingResume (RESTORED sent, waiting for the receiver's first receive on the QPs). No new slot is
  // posted in kDraining, kAwaitingHeld and kAwaitingResume.
  enum class Exchange : uint8_t { kNone, kDraining, kAwaitingHeld, kProbe, kAwaitingResume };
  bool holds_slots() const { return exchange_ != Exchange::kNone && exchange_ != Exchange::kProbe; }
  VerbsSendComm& c_;
  RegisteredBuffer sizes_;  // SizesSlot[kCtsSlots], source of the sizes record
  std::array<Slot, kCtsSlots> slots_{};
  uint64_t head_ = 0;                   // slots fully matched so far
  receiver_driven::SendBudget budget_;  // work requests of posted slots, per QP at most
  uint64_t failed_qps_ = 0;             // failover: the QPs whose traffic moved
  uint64_t exchange_qps_ = 0;           // failover: the QPs the MOVE in progress is about
  uint64_t resumed_qps_ = 0;  // recovery: QPs restored, not yet carrying receives before resume_seq_
  uint64_t resume_seq_ = 0;   // recovery: the receiver's first receive on resumed_qps_
  uint32_t epoch_ = 0;        // failovers and recoveries of this connection (notices' epoch)
  Exchange exchange_ = Exchange::kNone;
  // When the exchange holding slots began (its budget's start: failover::exchange_check).
  Connection::Clock::time_point exchange_since_{};
  failover::PortProbe probe_{c_};  // the ports' failures, and the probe of one ACTIVE again
};

class ReceiverDrivenRecv final : public RecvProtocol {
 public:
  explicit ReceiverDrivenRecv(VerbsRecvComm& c) : c_(c) {}
  Status prepare() override;
  uint64_t advertised_addr() const override { return reinterpret_cast<uint64_t>(sizes_.get()); }
  std::vector<uint32_t> advertised_rkeys() const override;
  // Called by its receiver, protocol_receiver (recv_comm.h), which NCCL's irecv calls.
  [[gnu::always_inline]] inline Status irecv(std::span<const RecvBuffer> bufs, Request** out);
  // Called only by its slots' tester, protocol_tester (connection.h).
  [[gnu::always_inline]] inline ncclResult_t test(RecvSlot* slot, int* done, int* sizes);
  Status on_completion(const ibv_wc& wc) override;
  // Failover (receiver_driven_failover.cpp), off the data path.
  bool on_port_lost(size_t lane) override;
  Status poll_notices() override;

 private:
  struct Progress {
    int pending = 0;          // immediates not arrived yet (one per QP; after a failover, per live QP)
    uint32_t imm = 0;         // the last immediate: the size, or kSizesInArea
    uint64_t arrived = 0;     // the QPs whose immediate arrived (failover's HELD; bit q & 63)
    bool replay_due = false;  // failover: the sender writes this receive's lost parts again
    uint64_t standing = 0;    // failover: the QPs with a standing receive for it (0: every QP)
  };
  // on_completion()'s failures.
  Status failed_completion(const ibv_wc& wc) const;
  Status unexpected_completion(const ibv_wc& wc) const;
  Status cts_beyond_window(size_t qp) const;
  Status recv_post_failed(int rc) const;
  // Failover (receiver_driven_failover.cpp): the standing receives of a receive on the live QPs only;
  // a receive's replayed immediate; a completion of a QP whose traffic moved; the sender's MOVE.
  Status post_live_receives(size_t index);
  Status on_replay(size_t index, uint32_t imm);
  Status on_failed_completion(const ibv_wc& wc);
  Status on_move(const failover::Notice& n);
  Status on_probe(const failover::Notice& n);
  Status on_restored(const failover::Notice& n);
  // An arrival while QP 0's arrivals are out of its receive queue's order (qp0_order_), or with a
  // replayed immediate: on_completion's slow path.
  Status on_moved_arrival(const ibv_wc& wc, uint64_t low, uint32_t imm);
  // Accounts one arrival of the receive in slot `index` on QP q: its immediate `imm`.
  void arrived(size_t index, size_t q, uint32_t imm) {
    Progress& p = progress_[index];
    p.imm = imm;
    p.arrived |= uint64_t{1} << (q & 63);
    --p.pending;
  }
  // test()'s failures: the peer's sizes do not fit the receive.
  Status no_sizes_record(int n) const;
  Status oversized(size_t got, size_t capacity) const;
  VerbsRecvComm& c_;
  RegisteredBuffer sizes_;  // SizesSlot[kCtsSlots], written by the peer
  RegisteredBuffer cts_;    // CtsSlot[kCtsSlots], source of CTS writes
  std::array<Progress, kCtsSlots> progress_{};
  std::array<receiver_driven::CtsWindow, kMaxQps> cts_windows_{};  // per QP
  uint64_t tail_ = 0;                                              // receives posted so far
  uint64_t failed_qps_ = 0;   // failover: the QPs the sender's MOVEs named (moved to ERR), not restored
  uint64_t flushed_ = 0;      // failover: failed QPs that showed a flushed receive
  uint64_t probing_qps_ = 0;  // recovery: the QPs of the PROBE answered, until RESTORED
  uint32_t epoch_ = 0;        // the last notice's epoch
  // After a failover whose parts are written again, QP 0's next arrivals come in the sender's order (the
  // replays first, then the receives not yet written, oldest first) while its receive queue holds them
  // in the order they were posted (those receives first, then one per replay): for those arrivals the
  // slot is this list's, not the receive's (bit 7: a replay).
  static constexpr uint8_t kReplayEntry = 0x80;
  static_assert(kCtsSlots <= kReplayEntry);
  std::array<uint8_t, kCtsSlots> qp0_order_{};
  uint32_t qp0_next_ = 0, qp0_count_ = 0;
};

}  // namespace railscope::net::verbs
