// SPDX-License-Identifier: Apache-2.0
// The receiving half of the eager protocol (eager.h): standing receives on every QP, ring messages
// matched to posted receives by tag in order (or held until one is posted), clear-to-sends for large
// messages, and credits written back in batches. A ring message's header is copied out of the ring
// once, on arrival, and only that checked copy is used afterwards (eager::take_header).
#include <arpa/inet.h>
#include <fmt/format.h>

#include <array>
#include <climits>
#include <cstring>
#include <new>

#include "plugin/net/verbs/eager/eager_protocol.h"
#include "plugin/net/verbs/failover/part_ledger.h"
#include "plugin/net/verbs/rdma_write.h"
#include "plugin/net/verbs/receiver_driven/receiver_driven.h"
#include "plugin/net/verbs/watch/diagnosis_map.h"
#include "railscope/core/params.h"

namespace railscope::net::verbs {
namespace {

using Clock = Connection::Clock;

Status bad_peer(std::string text) {
  return Status::fail(ncclRemoteError, "peer.bad_handshake", std::move(text));
}

// What a clear-to-send for buffer i of receive slot `index` says, whichever way it is written: every
// field of *c (ordinal, tag and seq 0, for the caller to set).
void fill_clear_to_send(eager::ClearToSend* c, const RecvSlot& r, size_t index, int i, void* data,
                        const VerbsMr* mr) {
  c->addr = reinterpret_cast<uint64_t>(data);
  c->size = r.sizes[i];
  for (int d = 0; d < eager::kMaxDevs; ++d)
    c->rkey[d] = (mr != nullptr && d < mr->ndevs) ? mr->mr[d]->rkey : 0;
  c->target = static_cast<uint32_t>(index * kMaxRecvs + static_cast<size_t>(i));
  c->status = eager::kAccept;
  c->ordinal = 0;
  c->tag = 0;
  c->reserved = 0;
  c->seq = 0;
}

}  // namespace

Status EagerRecv::prepare() {
  c_.set_receiver(&protocol_receiver<EagerRecv>);
  c_.offer_failover();
  ahead_ = params::get_bool("RAILSCOPE_NET_EAGER_AHEAD");
  const int remote_write = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  if (Status st = c_.register_buffer(eager::ring_bytes(c_.eager_max()), remote_write, &ring_); !st.ok())
    return st;
  return c_.register_buffer(eager::kControlSlots * eager::kControlSlotBytes, IBV_ACCESS_LOCAL_WRITE,
                            &staging_);
}

std::vector<uint32_t> EagerRecv::advertised_rkeys() const {
  std::vector<uint32_t> out;
  for (const auto& mr : ring_.mrs) out.push_back(mr->rkey);
  return out;
}

Status EagerRecv::start() {
  for (size_t q = 0; q < c_.qps().size(); ++q)
    for (uint32_t i = 0; i < eager::kReceiverRecvDepth; ++i)
      if (Status st = c_.post_recv(c_.qps()[q], kWrRecv | q); !st.ok()) return st;
  return Status::success();
}

// Gives each QP back the standing receives its completions consumed, in one ibv_post_recv per QP.
Status EagerRecv::repost_receives() {
  if (reposts_pending_ == 0) return Status::success();
  for (size_t q = 0; q < c_.qps().size(); ++q) {
    const int n = reposts_due_[q];
    if (n == 0) continue;
    if (failed_qps_ != 0 && q < failover::kMaxQps && (failed_qps_ >> q & 1) != 0) {  // in ERR: none
      reposts_pending_ -= n;
      reposts_due_[q] = 0;
      continue;
    }
    std::array<ibv_recv_wr, eager::kRepostBatch> wrs;  // the first n are filled
    for (int i = 0; i < n; ++i)
      wrs[static_cast<size_t>(i)] =
          ibv_recv_wr{kWrRecv | q, i + 1 < n ? &wrs[static_cast<size_t>(i) + 1] : nullptr, nullptr, 0};
    ibv_recv_wr* bad = nullptr;
    if (int rc = ibv_post_recv(c_.qps()[q].qp.get(), wrs.data(), &bad); rc != 0)
      return Status::fail(ncclSystemError, post_finding("ibv_post_recv", rc, c_.where()));
    reposts_pending_ -= n;
    reposts_due_[q] = 0;
  }
  return Status::success();
}

inline void* EagerRecv::control_slot(uint64_t seq) const {
  return static_cast<char*>(staging_.get()) + (seq % eager::kControlSlots) * eager::kControlSlotBytes;
}

// The caller checked control_.has_room(), so the staging slot of this write was last used by one that
// has left the send queue (eager_queues.h kControlSlots). Counted as posted here: the caller posts *wr,
// alone or chained after the writes it staged before it, before any other control write, or the
// connection fails. Returns the write's sequence number.
inline uint64_t EagerRecv::stage_control(const void* src, uint32_t bytes, uint64_t remote_offset,
                                         ibv_send_wr* wr, ibv_sge* sge) {
  const uint64_t seq = control_.next();
  std::memcpy(control_slot(seq), src, std::min<size_t>(bytes, eager::kControlSlotBytes));
  fill_control(seq, bytes, remote_offset, wr, sge);
  return seq;
}

inline void EagerRecv::fill_control(uint64_t seq, uint32_t bytes, uint64_t remote_offset, ibv_send_wr* wr,
                                    ibv_sge* sge) {
  void* slot = control_slot(seq);
  const QpLane& ql = c_.qps()[0];
  *sge = ibv_sge{reinterpret_cast<uint64_t>(slot), bytes, staging_.mrs[static_cast<size_t>(ql.lane)]->lkey};
  fill_rdma_write(wr, kWrCts | seq, sge, c_.remote().addr + remote_offset,
                  c_.remote().devs[static_cast<size_t>(ql.remote_dev)].rkey,
                  (bytes <= ql.max_inline ? IBV_SEND_INLINE : 0) |
                      (eager::ControlWindow::signalled(seq) ? IBV_SEND_SIGNALED : 0));
  control_.posted(seq);
}

// Posts staged control writes (a chain: one doorbell, under rxe one system call) on QP 0.
inline Status EagerRecv::post_staged(ibv_send_wr* first) {
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(c_.qps()[0].qp.get(), first, &bad); rc != 0)
    return Status::fail(ncclSystemError, post_finding("ibv_post_send (control)", rc, c_.where()));
  return Status::success();
}

Status EagerRecv::irecv(std::span<const RecvBuffer> bufs, Request** out) {
  *out = nullptr;
  if (!c_.error().ok()) return c_.error();
  // No completion queue poll here: a message that arrived before this receive but is not polled yet is
  // matched by the poll of the next test(), which takes the oldest waiting buffer with its tag (this
  // one or an older one), as a poll here would have; an irecv finds its reply not yet there as a rule.
  if (reposts_pending_ >= eager::kRepostFromIrecv)
    if (Status st = repost_receives(); !st.ok()) return c_.fail(std::move(st));
  const auto index = static_cast<size_t>(tail_ % kFifoDepth);
  RecvSlot& r = c_.slots()[index];
  if (r.in_use) return c_.not_ready();
  const int n = static_cast<int>(bufs.size());
  for (const RecvBuffer& b : bufs)
    if (b.mr == nullptr ? b.size > 0 : static_cast<VerbsMr*>(b.mr)->type != NCCL_PTR_HOST)
      return refuse_buffers(bufs);
  Targets& t = targets_[index];
  r.in_use = true;
  r.tester = &protocol_tester<EagerRecv, RecvSlot>;
  r.n = n;
  r.posted_at = c_.stats_on() ? Clock::now() : Clock::time_point{};  // for the stats line only
  t.seq = tail_ + 1;
  t.unfinished = n;
  for (int i = 0; i < n; ++i) {
    const RecvBuffer& b = bufs[static_cast<size_t>(i)];
    r.sizes[i] = b.size;
    r.got[i] = 0;
    t.data[i] = b.data;
    t.tags[i] = b.tag;
    t.ordinals[i] = ++posted_.of(b.tag);
    t.mrs[i] = static_cast<VerbsMr*>(b.mr);
    t.parts[i] = 0;
    t.state[i] = kWaiting;
    r.phandles[i] = b.phandle;
    // A buffer within the eager limit takes its message whole from the ring (QP 0); a larger one is
    // counted as the sender splits a message of its size over the QPs (chunk_of).
    c_.profile_start(c_.event_slot(r, i), b.phandle, IBV_WC_RECV_RDMA_WITH_IMM, t.seq, b.size,
                     b.size <= c_.eager_max());
  }
  ++tail_;
  c_.stats().posted();
  *out = &r;
  // Messages that arrived before this receive was posted: each buffer takes the one sent for it.
  bool delivered = false;
  for (int i = 0; i < n && nunexpected_ > 0; ++i)
    for (size_t u = 0; u < nunexpected_; ++u) {
      const uint64_t seq = unexpected_[u];
      if (held(seq).header.tag != t.tags[i] || held(seq).header.ordinal != t.ordinals[i]) continue;
      std::copy(unexpected_.begin() + static_cast<std::ptrdiff_t>(u + 1),
                unexpected_.begin() + static_cast<std::ptrdiff_t>(nunexpected_),
                unexpected_.begin() + static_cast<std::ptrdiff_t>(u));
      --nunexpected_;
      if (Status st = deliver_held(r, i, seq); !st.ok()) return c_.fail(std::move(st));
      delivered = true;
      break;
    }
  // Credits fall due only when a message is released or arrives (eager::credits_due): on_ring_message
  // looks at every arrival, and here only a release can be new.
  if (delivered)
    if (Status st = return_credits(); !st.ok()) return c_.fail(std::move(st));
  if (ahead_ && n == 1 && bufs[0].size > c_.eager_max())
    if (Status st = write_ahead_one(r); !st.ok()) return c_.fail(std::move(st));
  if (ahead_ && n > 1)
    if (Status st = write_ahead(r); !st.ok()) return c_.fail(std::move(st));
  return Status::success();
}

// Whether buffer i of receive slot r gets a clear-to-send written ahead now: the entry ahead it takes,
// or none when it is not a large buffer still waiting (*full false) or there is no room (*full true):
// none while queued clear-to-sends wait for the room one would take, and each counts among the large
// messages coming.
inline std::optional<uint32_t> EagerRecv::claim_ahead(const RecvSlot& r, const Targets& t, int i,
                                                      bool* full) {
  *full = false;
  if (t.state[i] != kWaiting || r.sizes[i] <= c_.eager_max() || t.mrs[i] == nullptr) return std::nullopt;
  *full = true;
  if (nqueued_ > 0 || large_incoming_ >= eager::kMaxLargeInFlight || !control_.has_room())
    return std::nullopt;
  return ahead_entries_.take();  // one is free while large_incoming_ bounds them (eager.h)
}

// Buffer i's clear-to-send built in the staging slot of the next control write, for entry ahead `entry`,
// and *wr, *sge filled to write it (stage_control's rule); the buffer is kAhead from here. Returns the
// write's sequence number.
inline uint64_t EagerRecv::stage_ahead(RecvSlot& r, Targets& t, int i, uint32_t entry, ibv_send_wr* wr,
                                       ibv_sge* sge) {
  const uint64_t seq = control_.next();
  auto* c = ::new (control_slot(seq)) eager::ClearToSend;  // a 64-byte slot of page-aligned memory
  fill_clear_to_send(c, r, c_.index_of(r), i, t.data[i], t.mrs[i]);
  c->ordinal = t.ordinals[i];
  c->tag = t.tags[i];
  c->seq = t.seq;
  t.cts_seq[i] = static_cast<uint32_t>(t.seq);
  t.state[i] = kAhead;
  t.entry[i] = static_cast<uint8_t>(entry);
  t.parts[i] = static_cast<int>(c_.qps().size());
  ++large_incoming_;  // its data may come at any time now
  fill_control(seq, sizeof *c, eager::kAheadOffset + sizeof *c * entry, wr, sge);
  return seq;
}

// A receive of one buffer (NCCL's proxy's, but for grouped receives): one write, built in its staging
// slot, without write_ahead's arrays of work requests.
Status EagerRecv::write_ahead_one(RecvSlot& r) {
  Targets& t = targets_[c_.index_of(r)];
  bool full = false;
  const std::optional<uint32_t> entry = claim_ahead(r, t, 0, &full);
  if (!entry) return Status::success();
  ibv_send_wr wr;
  ibv_sge sge;
  stage_ahead(r, t, 0, *entry, &wr, &sge);
  ++c_.stats().cts_writes;
  return post_staged(&wr);
}

Status EagerRecv::refuse_buffers(std::span<const RecvBuffer> bufs) const {
  if (Status st = VerbsRecvComm::check_buffers(bufs); !st.ok()) return st;
  return Status::fail(
      ncclInvalidArgument, "internal.bad_argument",
      fmt::format("irecv into device memory on a host-memory (eager) connection {}", c_.where()));
}

// Each large buffer still waiting (a held message may have satisfied one already), in the buffers' order,
// while there is room (claim_ahead). A grouped receive writes one entry per large buffer; entries that
// adjoin at both ends (eager::ahead_adjoins) go as one RDMA write, and the writes are chained into one
// post.
Status EagerRecv::write_ahead(RecvSlot& r) {
  Targets& t = targets_[c_.index_of(r)];
  std::array<ibv_send_wr, kMaxRecvs> wrs;  // the first `nwrs` are filled
  std::array<ibv_sge, kMaxRecvs> sges;
  size_t nwrs = 0;
  uint32_t last_entry = 0;
  uint64_t last_seq = 0;
  for (int i = 0; i < r.n; ++i) {
    bool full = false;
    const std::optional<uint32_t> entry = claim_ahead(r, t, i, &full);
    if (!entry && full) break;
    if (!entry) continue;
    const uint64_t seq = stage_ahead(r, t, i, *entry, &wrs[nwrs], &sges[nwrs]);
    if (nwrs > 0 && eager::ahead_adjoins(last_entry, last_seq, *entry, seq)) {
      // The previous write carries this entry too: its slot follows the previous one's.
      ibv_send_wr& w = wrs[nwrs - 1];
      sges[nwrs - 1].length += sizeof(eager::ClearToSend);
      w.send_flags &= ~static_cast<unsigned int>(IBV_SEND_INLINE);
      if (sges[nwrs - 1].length <= c_.qps()[0].max_inline) w.send_flags |= IBV_SEND_INLINE;
      if (eager::ControlWindow::signalled(seq)) {  // its completion retires this write and those before
        w.send_flags |= IBV_SEND_SIGNALED;
        w.wr_id = wrs[nwrs].wr_id;
      }
    } else {
      if (nwrs > 0) wrs[nwrs - 1].next = &wrs[nwrs];
      ++nwrs;
    }
    last_entry = *entry;
    last_seq = seq;
  }
  if (nwrs == 0) return Status::success();
  c_.stats().cts_writes += nwrs;
  return post_staged(&wrs[0]);
}

// One pass from match_from_: the receives it finds with every buffer matched (or finished) at the
// front move match_from_ on.
bool EagerRecv::find_buffer(int tag, uint64_t ordinal, RecvSlot** slot, int* buffer) {
  bool front = true;  // every receive before s is matched through
  for (uint64_t s = match_from_; s < tail_; ++s) {
    const auto index = static_cast<size_t>(s % kFifoDepth);
    RecvSlot& r = c_.slots()[index];
    const Targets& t = targets_[index];
    bool waiting = false;
    if (r.in_use && t.seq == s + 1)
      for (int i = 0; i < r.n; ++i) {
        if (t.tags[i] == tag && t.ordinals[i] == ordinal) {
          *slot = &r;
          *buffer = i;
          return true;
        }
        waiting = waiting || t.state[i] == kWaiting || t.state[i] == kAhead;
      }
    if (front && !waiting)
      match_from_ = s + 1;
    else
      front = false;
  }
  return false;
}

Status EagerRecv::on_completion(const ibv_wc& wc) {
  const uint64_t kind = wc.wr_id & kWrKindMask;
  const uint64_t low = wc.wr_id & ~kWrKindMask;
  if (wc.status != IBV_WC_SUCCESS) [[unlikely]]
    return on_failed_completion(wc);
  if (kind == kWrCts) {  // a signalled control write: it and every one before it left the send queue
    if (!control_.retire(low))
      return Status::fail(
          ncclInternalError, "internal.bad_argument",
          fmt::format("unexpected control completion (wr_id {:#x}) on {}", wc.wr_id, c_.where()));
    return post_queued();
  }
  if (kind != kWrRecv || low >= c_.qps().size() || wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM)
    return bad_peer(fmt::format("unexpected completion (opcode {}, wr_id {:#x}) on {}",
                                static_cast<int>(wc.opcode), wc.wr_id, c_.where()));
  // The standing receive is given back later, in a batch (repost_receives: in irecv, off the path
  // from a message's arrival to the reply NCCL sends on it, or here once a batch is due).
  ++reposts_pending_;
  if (++reposts_due_[low] == eager::kRepostBatch)
    if (Status st = repost_receives(); !st.ok()) return st;
  const uint32_t imm = ntohl(wc.imm_data);
  if (imm & eager::kImmData) return on_data_part(imm & ~eager::kImmData, wc.byte_len, low);
  if (low != 0) return bad_peer(fmt::format("ring message on QP {} of {}", low, c_.where()));
  return on_ring_message(imm);
}

Status EagerRecv::on_ring_message(uint32_t imm) {
  const uint64_t seq = ring_arrived_.messages + 1;
  // A sender keeps to its credits: the messages and bytes this end said it released (the credit word
  // it wrote; the sender can have read no more than that).
  const eager::RingCount& free_from = credits_returned_;
  if (seq - free_from.messages > eager::kRingMessages)
    return bad_peer(fmt::format("ring message {} with only {} released: more than {} in flight on {}", seq,
                                free_from.messages, eager::kRingMessages, c_.where()));
  // The copy goes straight into its entry: a message refused here fails the connection.
  Held& m = held(seq);
  if (!eager::check_header(ring(), seq, ring_arrived_.position, imm, c_.eager_max(), &m.header, &m.place))
    return bad_peer(fmt::format(
        "{} on {}",
        eager::header_refusal(ring_.size, seq, ring_arrived_.position, imm, c_.eager_max(), m.header),
        c_.where()));
  const eager::Header* h = &m.header;
  const eager::RingPlace& place = m.place;
  if (place.end - free_from.position > ring_.size)
    return bad_peer(
        fmt::format("ring message {} written over ring bytes not released yet on {}", seq, c_.where()));
  ring_arrived_ = {seq, place.end};
  RecvSlot* r = nullptr;
  int i = 0;
  if (find_buffer(h->tag, h->ordinal, &r, &i)) {
    const uint8_t state = targets_[c_.index_of(*r)].state[i];
    if (state != kWaiting && state != kAhead)
      return bad_peer(fmt::format("ring message {} is send {} of tag {}, whose receive has its message on {}",
                                  seq, h->ordinal, h->tag, c_.where()));
    if (Status st = deliver(*r, i, seq); !st.ok()) return st;
    return return_credits();
  }
  if (nunexpected_ >= unexpected_.size())
    return bad_peer(fmt::format("more ring messages held than the ring has slots on {}", c_.where()));
  unexpected_[nunexpected_++] = seq;
  return return_credits();  // its arrival may make those released before it due
}

// Ring message `seq` is for buffer i of r: copy it out, or answer a request-to-send with a
// clear-to-send naming this buffer. Either way its ring slot is free afterwards. Only the header copy
// taken on arrival is read here.
inline Status EagerRecv::deliver(RecvSlot& r, int i, uint64_t seq) {
  const eager::Header& h = held(seq).header;
  const size_t index = c_.index_of(r);
  Targets& t = targets_[index];
  // The sender did not use the clear-to-send written ahead (a small message, or it asked first): no
  // data comes for it, so it no longer counts among the large messages coming.
  const bool ahead = t.state[i] == kAhead;
  if (ahead) ahead_done(t, i);
  if (h.kind == eager::kData) {
    if (h.size > r.sizes[i])
      return Status::fail(ncclInvalidUsage, "internal.bad_argument",
                          fmt::format("the peer sent {} bytes (tag {}) to a {}-byte receive on {}", h.size,
                                      h.tag, r.sizes[i], c_.where()));
    const std::span<const std::byte> bytes = eager::payload(ring(), held(seq).place, c_.eager_max(), h);
    eager::copy_payload(t.data[i], bytes.data(), bytes.size());
    r.got[i] = bytes.size();
    t.state[i] = kDone;
    --t.unfinished;
    ++c_.stats().eager;
    if (ahead)  // room for a queued clear-to-send
      if (Status st = post_queued(); !st.ok()) return st;
  } else {
    ++c_.stats().rts;
    eager::ClearToSend c;
    fill_clear_to_send(&c, r, index, i, t.data[i], t.mrs[i]);
    if (h.size > r.sizes[i]) c.status = eager::kTooSmall;
    c.seq = h.seq;
    t.cts_seq[i] = static_cast<uint32_t>(h.seq);
    r.got[i] = h.size;
    t.parts[i] = static_cast<int>(c_.qps().size());
    t.counted[i] = false;  // the request-to-send said the size
    if (c.status == eager::kTooSmall) {
      // The connection fails here; the sender learns the sizes too when the send queue has room.
      t.state[i] = kDone;
      if (control_.has_room()) {
        ++c_.stats().cts_writes;
        if (Status st = post_control(&c, sizeof c, eager::kMailboxOffset + sizeof c * h.req); !st.ok())
          return st;
      }
      return Status::fail(ncclInvalidUsage, "internal.bad_argument",
                          fmt::format("the peer sends {} bytes (tag {}) to a {}-byte receive on {}", h.size,
                                      h.tag, r.sizes[i], c_.where()));
    }
    // Queued, and posted at once unless kMaxLargeInFlight large messages are already coming or the
    // send queue is full (eager_queues.h).
    t.state[i] = kAsked;
    if (nqueued_ >= queued_cts_.size())
      return Status::fail(
          ncclInternalError, "internal.bad_argument",
          fmt::format("more requests-to-send waiting than the sender's mailbox has entries on {}",
                      c_.where()));
    queued_cts_[(queued_head_ + nqueued_++) % queued_cts_.size()] = QueuedCts{c, h.req};
    if (Status st = post_queued(); !st.ok()) return st;
  }
  released_.release(seq);
  return Status::success();
}

Status EagerRecv::deliver_held(RecvSlot& r, int i, uint64_t seq) { return deliver(r, i, seq); }

Status EagerRecv::on_data_part(uint32_t target, uint32_t bytes, uint64_t qp) {
  // A part sent again after a failover names itself in its immediate; any other is its QP's (chunk_of).
  uint64_t part = qp;
  if ((target & failover::kImmReplayed) != 0) [[unlikely]] {
    const std::optional<failover::ReplayedPart> p = failover::replayed_part(target);
    if (!p) return bad_peer(fmt::format("data immediate {:#x} on {}", target, c_.where()));
    target = p->target;
    part = p->part;
  }
  const size_t s = target / kMaxRecvs, i = target % kMaxRecvs;
  RecvSlot* r = s < c_.slots().size() ? &c_.slots()[s] : nullptr;
  Targets* t = s < targets_.size() ? &targets_[s] : nullptr;
  if (r == nullptr || t == nullptr || !r->in_use || static_cast<int>(i) >= r->n ||
      (t->state[i] != kIncoming && t->state[i] != kAhead) || t->parts[i] <= 0)
    return bad_peer(fmt::format("data for receive target {}, which expects none, on {}", target, c_.where()));
  // Each part once (docs/failover.md): a second copy cannot count twice or end a message early.
  if (!failover::take_part(&t->have[i], part, c_.qps().size()))
    return bad_peer(fmt::format("part {} of receive target {} again, or not one of its {} parts, on {}", part,
                                target, c_.qps().size(), c_.where()));
  if (t->state[i] == kAhead) {  // the first part of a message written into the clear-to-send ahead
    // The sender copied the entry before it wrote this: the entry is free again. The message still
    // counts among those coming until its last part.
    ahead_entries_.give_back(t->entry[i]);
    t->state[i] = kIncoming;
    t->counted[i] = true;
    r->got[i] = 0;
    ++c_.stats().ahead;
  }
  if (t->counted[i]) {  // no request-to-send said its size: the parts' completions do
    if (bytes > r->sizes[i] - r->got[i])
      return bad_peer(fmt::format("data for receive target {} beyond its {} bytes on {}", target, r->sizes[i],
                                  c_.where()));
    r->got[i] += bytes;
  }
  if (--t->parts[i] == 0) {
    t->have[i] = 0;
    t->state[i] = kDone;
    --t->unfinished;
    --large_incoming_;
    return post_queued();
  }
  return Status::success();
}

Status EagerRecv::post_queued_now() {
  while (nqueued_ > 0 && large_incoming_ < eager::kMaxLargeInFlight && control_.has_room()) {
    const QueuedCts& q = queued_cts_[queued_head_];
    queued_head_ = (queued_head_ + 1) % queued_cts_.size();
    --nqueued_;
    targets_[q.cts.target / kMaxRecvs].state[q.cts.target % kMaxRecvs] = kIncoming;
    ++large_incoming_;
    ++c_.stats().cts_writes;
    if (Status st = post_control(&q.cts, sizeof q.cts, eager::kMailboxOffset + sizeof q.cts * q.req);
        !st.ok())
      return st;
  }
  if (credits_queued_ && control_.has_room()) {
    credits_queued_ = false;
    return return_credits();
  }
  return Status::success();
}

Status EagerRecv::post_control(const void* src, uint32_t bytes, uint64_t remote_offset) {
  ibv_sge sge;
  ibv_send_wr wr;
  stage_control(src, bytes, remote_offset, &wr, &sge);
  return post_staged(&wr);
}

Status EagerRecv::write_credits(const eager::RingCount& now) {
  if (!control_.has_room()) {  // written once a signalled control write completes (post_queued)
    credits_queued_ = true;
    return Status::success();
  }
  credits_returned_ = now;
  return post_control(&now.position, sizeof now.position, eager::kCreditWordOffset);
}

void EagerRecv::close() {
  if (!c_.error().ok() || c_.qps().empty()) return;
  // Out of band: the kernel delivers it after this end's QPs are gone, which an RDMA write (and its
  // acknowledgement) would not survive. A few bytes into an idle socket: the send does not block.
  Message m;
  m.type = MessageType::Closing;
  m.released = released().messages;
  c_.oob().send(m);
  bool done = false;
  (void)c_.oob().flush(&done);
}

ncclResult_t EagerRecv::test(RecvSlot* r, int* done, int* sizes) {
  *done = 0;
  if (!r->in_use) return VerbsRecvComm::finished_receive();
  if (!c_.drain_cqs(*this)) return c_.error_result();
  if (targets_[c_.index_of(*r)].unfinished > 0) return c_.idle_result();
  c_.complete(r, done, sizes);
  return ncclSuccess;
}

}  // namespace railscope::net::verbs
