// SPDX-License-Identifier: Apache-2.0
// The eager protocol's two ends (what travels and where: eager.h). Chosen in the handshake when both
// ends carry host memory only and offer RAILSCOPE_NET_EAGER_MAX > 0.
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "plugin/net/verbs/eager/eager.h"
#include "plugin/net/verbs/eager/eager_queues.h"
#include "plugin/net/verbs/failover/failover_message.h"
#include "plugin/net/verbs/failover/port_probe.h"
#include "plugin/net/verbs/recv_comm.h"
#include "plugin/net/verbs/send_comm.h"

namespace railscope::net::verbs {

static_assert(kSendRequests >= static_cast<size_t>(eager::kRingMessages) + eager::kMaxLargeInFlight,
              "every eager message in flight has a request");
static_assert(eager::kMaxTargets == static_cast<size_t>(kFifoDepth) * kMaxRecvs,
              "a clear-to-send names a buffer of one of the receive comm's slots");
static_assert(eager::kAheadEntries >= eager::kMaxLargeInFlight,
              "a clear-to-send written ahead holds an entry and counts among the large messages coming");

class EagerSend final : public SendProtocol {
 public:
  using Clock = Connection::Clock;
  explicit EagerSend(VerbsSendComm& c) : c_(c) {}
  Status prepare() override;
  // Inlined into its sender, protocol_sender (send_comm.h), which NCCL's isend calls. The always_inline
  // attributes of this file and drain_cqs are those without which bench/net_instructions/check.sh
  // exceeds its budget (bench/net_instructions/RESULTS.md).
  [[gnu::always_inline]] inline Status isend(void* data, size_t size, int tag, VerbsMr* mr, void* phandle,
                                             Request** out);
  // Called only by its requests' tester, protocol_tester (connection.h), into which it is inlined.
  [[gnu::always_inline]] inline ncclResult_t test(SendReq* req, int* done, int* sizes);
  // Called by the drain of its own data path (Connection::drain_cqs(protocol)) and by the comm's
  // virtual one.
  inline Status on_completion(const ibv_wc& wc) override;
  // Eager sends are reported done once posted: wait (bounded) until the receiver has them.
  void drain() override;
  bool on_port_lost(size_t lane) override;
  // A failed port that is ACTIVE again is probed (recovery), and an exchange waiting on the clock ends.
  Status poll_notices() override;

 private:
  // Failover and recovery (docs/failover.md; eager_failover.cpp), off the data path. Where an exchange
  // with the receiver stands: kDraining (QPs stopped, waiting for every part in flight to complete
  // here before MOVE), kAwaitingHeld (MOVE sent), kProbe (a recovered port's probe, probe_).
  enum class Exchange : uint8_t { kNone, kDraining, kAwaitingHeld, kProbe };
  // A completion in error: true when it belongs to, or starts, a failover (the connection goes on).
  bool failover_absorbs(const ibv_wc& wc);
  // Moves the traffic of QPs `mask` elsewhere: they go to ERR, every large message in flight is held,
  // and once their parts completed here the receiver gets MOVE. False when it cannot (the connection
  // fails as before).
  bool start_failover(uint64_t mask, const std::string& cause);
  // The exchange in progress, moved on (from test() and isend while one is).
  Status failover_progress();
  // kDraining: every held message's parts completed here (success or flushed), so the receiver's HELD
  // will say all that arrived; MOVE goes.
  Status send_move_when_drained();
  // The receiver's HELD, once it came: every part of a held message it lacks is sent again on live QPs.
  Status poll_held();
  // Recovery (failover/port_probe.h): the probe moved on, a probe write's completion, and what a probe
  // that ended changes (`passed`: traffic returns to its QPs, RESTORED goes).
  Status probe_progress();
  Status on_probe_done(size_t q, bool ok);
  Status probe_ended(bool passed);
  // Part `part` of req's message (chunk_of) on QP `on_qp`, with immediate `imm`.
  Status post_part(SendReq* req, size_t part, size_t on_qp, uint32_t imm);
  // Posts req's data into its clear-to-send's checked copy (send_ahead, progress).
  inline Status post_data(SendReq* req, const eager::ClearToSend& c);
  // Posts every waiting request whose clear-to-send arrived. Inline: with no request-to-send waiting
  // (every send into a clear-to-send written ahead) it is the comparison.
  Status progress() {
    if (nwaiting_ == 0) return Status::success();
    return progress_now();
  }
  Status progress_now();
  // The clear-to-send the receiver wrote ahead for the send `ordinal` of `tag`, copied once, when it is
  // there, accepts the message and no older large message waits for its own (data leaves oldest first).
  std::optional<eager::ClearToSend> take_ahead(int tag, uint64_t ordinal, size_t size);
  // isend of a large message into the clear-to-send written ahead for it, when there is one (else
  // nullopt): out of isend's line, which small messages take.
  std::optional<Status> send_ahead(int tag, void* data, size_t size, VerbsMr* mr, void* phandle,
                                   uint64_t* sent, Request** out);
  // Sets a request up for isend (a large one: with a free mailbox entry).
  void start(SendReq* req, void* data, size_t size, VerbsMr* mr, bool whole, uint64_t rts_seq);
  uint64_t credit_word() const;  // the ring position up to which the receiver released it
  bool mailbox_full() const { return mailbox_used_ == kAllMailbox; }
  void read_closing(eager::CloseFacts* f);  // the receiver's CLOSING message, if it came
  VerbsSendComm& c_;
  static_assert(eager::kMailboxEntries <= 64);
  static constexpr uint64_t kAllMailbox =
      eager::kMailboxEntries == 64 ? ~uint64_t{0} : (uint64_t{1} << eager::kMailboxEntries) - 1;
  RegisteredBuffer stage_;     // the ring as sent (header + payload), at the offsets the receiver's has
  eager::SenderRing ring_;     // what of the ring is in flight, released, completed here
  uint64_t ring_retired_ = 0;  // ring messages whose send completed locally
  std::array<uint16_t, eager::kMailboxEntries> waiting_{};  // requests-to-send awaiting their clear-to-send
  size_t nwaiting_ = 0;
  // Mailbox entries held by large messages, from isend until their data parts completed (one bit each);
  // a message sent into a clear-to-send written ahead holds one too, so the budget stays the same.
  uint64_t mailbox_used_ = 0;
  eager::TagCounts sent_;      // per tag, the sends posted (the next one's ordinal is one more)
  size_t ahead_next_ = 0;      // the entry after the one last used: where the next match is looked for first
  uint64_t failed_qps_ = 0;    // QPs whose traffic moved (failover); their parts go on live QPs
  uint64_t exchange_qps_ = 0;  // the QPs the MOVE in progress is about
  uint32_t epoch_ = 0;         // failovers and recoveries of this connection (notices' epoch)
  Exchange exchange_ = Exchange::kNone;
  bool awaiting_held_ = false;          // kDraining or kAwaitingHeld: no new large message's data goes
  Clock::time_point exchange_since_{};  // when the failover in progress began (its budget's start)
  size_t moved_ = 0;                    // large messages in flight when the port failed
  failover::PortProbe probe_{c_};       // the ports' failures, and the probe of one ACTIVE again
};

class EagerRecv final : public RecvProtocol {
 public:
  explicit EagerRecv(VerbsRecvComm& c) : c_(c) {}
  Status prepare() override;
  uint64_t advertised_addr() const override { return reinterpret_cast<uint64_t>(ring_.get()); }
  std::vector<uint32_t> advertised_rkeys() const override;
  // The standing receives every QP needs.
  Status start() override;
  // Inlined into its receiver, protocol_receiver (recv_comm.h), which NCCL's irecv calls.
  [[gnu::always_inline]] inline Status irecv(std::span<const RecvBuffer> bufs, Request** out);
  // Called only by its slots' tester, protocol_tester (connection.h), into which it is inlined.
  [[gnu::always_inline]] inline ncclResult_t test(RecvSlot* slot, int* done, int* sizes);
  // Inlined into the drain of its own data path (Connection::drain_cqs(protocol)).
  [[gnu::always_inline]] inline Status on_completion(const ibv_wc& wc) override;
  // Tells the sender out of band how many ring messages were taken (CLOSING), so a sender still
  // closing knows every message it sent arrived without an RDMA acknowledgement from this end.
  void close() override;
  bool on_port_lost(size_t lane) override;
  Status poll_notices() override;

 private:
  // Failover and recovery (docs/failover.md; eager_failover.cpp): the sender's MOVE, answered with
  // HELD; its PROBE (this end restarts the QPs named and answers PROBE); its RESTORED.
  Status on_notice(const failover::Notice& n);
  Status on_move(const failover::Notice& n);
  Status on_probe(const failover::Notice& n);
  Status on_restored(const failover::Notice& n);
  // Flushed receives on a failed QP: dropped (they say that every arrival before them was polled).
  Status on_failed_completion(const ibv_wc& wc);
  // Per receive slot, per buffer where it stands; matched by tag and ordinal (the k-th buffer posted
  // with a tag takes the k-th message sent with it). kAsked: matched to a request-to-send whose
  // clear-to-send waits for room (eager_queues.h). kAhead: a clear-to-send was written ahead (eager.h);
  // the send it is for comes as data, or as a ring message when the sender did not see it in time.
  enum : uint8_t { kWaiting = 0, kIncoming = 1, kDone = 2, kAsked = 3, kAhead = 4 };
  struct Targets {
    uint64_t seq = 0;  // 1, 2, 3 ... receives posted on the connection
    int unfinished = 0;
    void* data[kMaxRecvs] = {};
    int tags[kMaxRecvs] = {};
    uint64_t ordinals[kMaxRecvs] = {};
    VerbsMr* mrs[kMaxRecvs] = {};
    int parts[kMaxRecvs] = {};  // data parts (one per QP) still to arrive
    uint8_t state[kMaxRecvs] = {};
    bool counted[kMaxRecvs] = {};   // data written ahead: its size is what the parts' completions say
    uint8_t entry[kMaxRecvs] = {};  // kAhead: the entry ahead its clear-to-send is in
    // The data parts taken (bit p: part p, chunk_of), each once; 0 when none is coming.
    uint64_t have[kMaxRecvs] = {};
    uint32_t cts_seq[kMaxRecvs] = {};  // low 32 bits of the seq of its clear-to-send (failover's HELD)
  };
  // Why irecv refuses buffers (one without a memory handle, or in device memory).
  Status refuse_buffers(std::span<const RecvBuffer> bufs) const;
  Status on_ring_message(uint32_t imm);
  Status on_data_part(uint32_t target, uint32_t bytes, uint64_t qp);
  // The posted buffer the send `ordinal` of `tag` is for (any state), if it is posted.
  inline bool find_buffer(int tag, uint64_t ordinal, RecvSlot** slot, int* buffer);
  // Writes a clear-to-send ahead for each buffer of receive slot r that is large, while there is room;
  // write_ahead_one for a receive of one buffer.
  Status write_ahead(RecvSlot& r);
  Status write_ahead_one(RecvSlot& r);
  inline std::optional<uint32_t> claim_ahead(const RecvSlot& r, const Targets& t, int i, bool* full);
  inline uint64_t stage_ahead(RecvSlot& r, Targets& t, int i, uint32_t entry, ibv_send_wr* wr, ibv_sge* sge);
  // Buffer i of t leaves kAhead: its entry may be rewritten, and it no longer counts as coming.
  void ahead_done(Targets& t, int i) {
    ahead_entries_.give_back(t.entry[i]);
    --large_incoming_;
  }
  bool ahead_ = true;  // RAILSCOPE_NET_EAGER_AHEAD
  // A message into buffer `buffer` of r, on its arrival; a receive that finds its message already held
  // calls deliver_held.
  [[gnu::always_inline]] inline Status deliver(RecvSlot& r, int buffer, uint64_t seq);
  Status deliver_held(RecvSlot& r, int buffer, uint64_t seq);
  // Control writes (clear-to-sends, credits) into the sender's region on QP 0, one in kSignalEvery
  // signalled so the send queue drains: one at once, or several staged (each copied into its control
  // slot, *wr and *sge filled to write it) and then posted as one chain.
  Status post_control(const void* src, uint32_t bytes, uint64_t remote_offset);
  inline uint64_t stage_control(const void* src, uint32_t bytes, uint64_t remote_offset, ibv_send_wr* wr,
                                ibv_sge* sge);
  // The staging slot of control write seq, and *wr, *sge filled to write its first `bytes` (stage_control
  // without the copy, for a write built in its slot).
  void* control_slot(uint64_t seq) const;
  inline void fill_control(uint64_t seq, uint32_t bytes, uint64_t remote_offset, ibv_send_wr* wr,
                           ibv_sge* sge);
  inline Status post_staged(ibv_send_wr* first);
  // Writes the released ring position into the sender's credit word when due (eager::credits_due).
  // Inline: most messages find none due, and that is the comparison.
  Status return_credits() {
    const eager::RingCount now = released();
    if (!eager::credits_due(now, ring_arrived_, credits_returned_, ring_.size)) return Status::success();
    return write_credits(now);
  }
  Status write_credits(const eager::RingCount& now);
  // The leading ring messages released (each matched and copied out, or answered) and where the
  // newest of them ends. The newest released message's place is still there: a message arrives only
  // within the credits written back (on_ring_message), at most kRingMessages after released_at_, so
  // the entries of messages after released_at_ have not been reused.
  eager::RingCount released() {
    const uint64_t prefix = released_.advance();
    if (prefix != released_at_.messages) released_at_ = {prefix, held(prefix).place.end};
    return released_at_;
  }
  // Posts the clear-to-sends queued, oldest first, while fewer than kMaxLargeInFlight large
  // messages are coming and the send queue has room; then credits queued. Inline: with nothing
  // queued (the rule: every large message's data completes here) it is the comparison.
  Status post_queued() {
    if (nqueued_ == 0 && !credits_queued_) return Status::success();
    return post_queued_now();
  }
  Status post_queued_now();
  Status repost_receives();
  std::span<const std::byte> ring() const { return {static_cast<const std::byte*>(ring_.get()), ring_.size}; }
  VerbsRecvComm& c_;
  RegisteredBuffer ring_;     // eager ring, written by the peer
  RegisteredBuffer staging_;  // control writes as sent, one slot per write in the send queue
  std::array<Targets, kFifoDepth> targets_{};
  // The checked copy of each ring message's header, taken once on arrival (eager::take_header): the
  // only header the rest of the protocol reads; and where the message lies in the ring. Message seq's
  // is held(seq).
  struct Held {
    eager::Header header;
    eager::RingPlace place;
  };
  std::array<Held, eager::kRingMessages> held_{};
  Held& held(uint64_t seq) { return held_[(seq - 1) % eager::kRingMessages]; }
  uint64_t tail_ = 0;                  // receives posted so far
  eager::RingCount ring_arrived_;      // ring messages arrived, and where the last one ends
  eager::RingCount released_at_;       // released(), as last read
  eager::RingCount credits_returned_;  // what the sender's credit word says
  uint64_t match_from_ = 0;            // receives before this one have every buffer matched
  eager::ControlWindow control_;       // control writes in the send queue of QP 0
  // Clear-to-sends queued (and the sender's mailbox entry each goes to), oldest first: one per
  // request-to-send, each holding a mailbox entry of the sender until its data arrived, so the
  // mailbox bounds them.
  struct QueuedCts {
    eager::ClearToSend cts;
    uint32_t req;
  };
  std::array<QueuedCts, eager::kMailboxEntries> queued_cts_{};
  size_t queued_head_ = 0, nqueued_ = 0;
  uint32_t large_incoming_ = 0;        // clear-to-sends posted whose data parts have not all arrived
  eager::AheadEntries ahead_entries_;  // the sender's entries ahead that hold a clear-to-send not yet taken
  bool credits_queued_ = false;        // a credit write found the send queue full
  eager::ReleasedPrefix released_;
  std::array<uint64_t, eager::kRingMessages> unexpected_{};  // ring messages no receive matched yet, in order
  size_t nunexpected_ = 0;
  eager::TagCounts posted_;  // per tag, the buffers posted (the next one's ordinal is one more)
  // Per QP (at most kMaxQpsPerConn x kMaxDevsPerEnd): standing receives consumed, not yet given back.
  std::array<int, kMaxQpsPerConn * kMaxDevsPerEnd> reposts_due_{};
  int reposts_pending_ = 0;   // their sum
  uint64_t failed_qps_ = 0;   // QPs the sender's MOVE named (failover): moved to ERR, not reposted
  uint64_t flushed_ = 0;      // those of them whose standing receives were seen flushed
  uint64_t probing_qps_ = 0;  // those of them restarted at the sender's PROBE, until its RESTORED
  uint32_t epoch_ = 0;        // the last failover or recovery epoch taken
};

}  // namespace railscope::net::verbs
