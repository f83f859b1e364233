// SPDX-License-Identifier: Apache-2.0
// The sending half of the eager protocol (eager.h): ring messages, credits, and the data of large
// messages once the receiver's clear-to-send for exactly that message is in the mailbox.
#include <arpa/inet.h>
#include <fmt/format.h>

#include <atomic>
#include <bit>
#include <climits>
#include <cstring>
#include <thread>

#include "plugin/net/verbs/eager/eager_protocol.h"
#include "plugin/net/verbs/eager/eager_queues.h"
#include "plugin/net/verbs/failover/failover_policy.h"
#include "plugin/net/verbs/failover/part_ledger.h"
#include "plugin/net/verbs/rdma_write.h"
#include "plugin/net/verbs/watch/diagnosis_map.h"
#include "railscope/core/log.h"

namespace railscope::net::verbs {
namespace {

using Clock = Connection::Clock;

const volatile eager::ClearToSend& mailbox_entry(const RegisteredBuffer& region, size_t index) {
  const auto* base = static_cast<const char*>(region.get()) + eager::kMailboxOffset;
  return reinterpret_cast<const volatile eager::ClearToSend*>(base)[index];
}

const volatile eager::ClearToSend& ahead_entry(const RegisteredBuffer& region, size_t index) {
  const auto* base = static_cast<const char*>(region.get()) + eager::kAheadOffset;
  return reinterpret_cast<const volatile eager::ClearToSend*>(base)[index];
}

// One read of every field of an entry the receiver writes, after its seq said it is complete.
eager::ClearToSend read_entry(const volatile eager::ClearToSend& v) {
  eager::ClearToSend c{};
  c.addr = v.addr;
  c.size = v.size;
  for (int d = 0; d < eager::kMaxDevs; ++d) c.rkey[d] = v.rkey[d];
  c.target = v.target;
  c.status = v.status;
  c.ordinal = v.ordinal;
  c.tag = v.tag;
  c.seq = v.seq;
  return c;
}

std::string_view pointer_kind(int type) {
  return type == NCCL_PTR_CUDA ? "CUDA" : type == NCCL_PTR_DMABUF ? "DMA-BUF" : "unknown";
}

}  // namespace

Status EagerSend::prepare() {
  c_.set_sender(&protocol_sender<EagerSend>);
  c_.offer_failover();
  ring_ = eager::SenderRing(eager::ring_bytes(c_.eager_max()));
  return c_.register_buffer(ring_.size(), IBV_ACCESS_LOCAL_WRITE, &stage_);
}

std::optional<eager::ClearToSend> EagerSend::take_ahead(int tag, uint64_t ordinal, size_t size) {
  if (nwaiting_ > 0) return std::nullopt;
  for (size_t n = 0; n < eager::kAheadEntries; ++n) {
    const size_t i = (ahead_next_ + n) % eager::kAheadEntries;
    const volatile eager::ClearToSend& v = ahead_entry(c_.region(), i);
    const uint64_t seq = v.seq;
    if (seq == 0 || v.ordinal != ordinal || v.tag != tag) continue;
    // The receiver rewrites an entry for a later receive once this one's is done, so the copy counts
    // only if the entry did not change while it was read.
    std::atomic_thread_fence(std::memory_order_acquire);
    const eager::ClearToSend c = read_entry(v);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (v.seq != seq || c.seq != seq || c.ordinal != ordinal || c.tag != tag) return std::nullopt;
    // A buffer too small: the request-to-send path makes both ends say so, with the sizes.
    if (c.status != eager::kAccept || c.size < size) return std::nullopt;
    ahead_next_ = (i + 1) % eager::kAheadEntries;
    return c;
  }
  return std::nullopt;
}

uint64_t EagerSend::credit_word() const {
  const auto* word = reinterpret_cast<const volatile uint64_t*>(static_cast<const char*>(c_.region().get()) +
                                                                eager::kCreditWordOffset);
  return *word;
}

Status EagerSend::isend(void* data, size_t size, int tag, VerbsMr* mr, void* phandle, Request** out) {
  *out = nullptr;
  if (!c_.error().ok()) return c_.error();
  // The send queue completes only some ring writes (eager::ring_write_signalled) and the data of large
  // messages: an isend polls when one of those can be waiting, or when the ring has no room, not on
  // every call. A failed write completes in error at the latest with the next signalled one.
  bool polled = false;
  auto poll = [&] {
    polled = true;
    if (!c_.drain_cqs(*this)) return c_.error();
    return progress();
  };
  if (ring_.posted() - ring_retired_ >= eager::kSignalEvery || nwaiting_ > 0 || mailbox_full())
    if (Status st = poll(); !st.ok()) return st;
  if (size > 0 && mr == nullptr)
    return Status::fail(ncclInternalError, "internal.bad_argument", "isend without a memory handle");
  if (mr != nullptr && mr->type != NCCL_PTR_HOST)
    return Status::fail(ncclInvalidArgument, "internal.bad_argument",
                        fmt::format("isend of {} memory on a host-memory (eager) connection {}",
                                    pointer_kind(mr->type), c_.where()));
  // Ring bytes are free once the receiver released them and their write completed here.
  if (const uint64_t word = credit_word(); !ring_.credit(word))
    return c_.fail(
        Status::fail(ncclRemoteError, "peer.bad_handshake",
                     fmt::format("the receiver released the ring up to byte {} when {} bytes were sent on {}",
                                 word, ring_.end(), c_.where())));
  // A large message holds a mailbox entry and a data part in every QP's send queue until it
  // completes: their number is bounded so the queues can be (eager_queues.h).
  const bool whole = size <= c_.eager_max();
  if (!whole && (mailbox_full() || awaiting_held_)) [[unlikely]] {
    if (awaiting_held_)  // a failover: nothing new until the receiver said what it holds
      if (Status st = failover_progress(); !st.ok()) return st;
    return c_.not_ready();
  }
  uint64_t& sent = sent_.of(tag);
  // The receiver wrote a clear-to-send for this very send ahead: the data goes now, no ring message.
  if (!whole)
    if (std::optional<Status> st = send_ahead(tag, data, size, mr, phandle, &sent, out))
      return std::move(*st);
  const size_t stride = eager::message_stride(whole ? size : 0);
  std::optional<eager::RingPlace> place = ring_.reserve(stride, ring_retired_);
  if (!place && !polled) {  // the signalled write the ring waits for may have completed
    if (Status st = poll(); !st.ok()) return st;
    place = ring_.reserve(stride, ring_retired_);
  }
  if (!place) return c_.not_ready();
  SendReq* req = c_.pool().get();
  if (req == nullptr) {
    ++c_.stats().not_ready;
    return Status::success();
  }
  const uint64_t seq = ring_.posted() + 1;
  const auto index = c_.pool().index_of(req);
  start(req, data, size, mr, whole, whole ? 0 : seq);

  const size_t offset = place->offset(ring_.size());
  char* slot = static_cast<char*>(stage_.get()) + offset;
  const eager::Header h{seq,          static_cast<uint32_t>(size),
                        tag,          whole ? eager::kData : eager::kRequestToSend,
                        req->mailbox, sent + 1};
  std::memcpy(slot, &h, sizeof h);
  if (whole) eager::copy_payload(slot + sizeof h, data, size);
  const QpLane& ql = c_.qps()[0];
  const auto bytes = static_cast<uint32_t>(sizeof h + (whole ? size : 0));
  ibv_sge sge{reinterpret_cast<uint64_t>(slot), bytes, stage_.mrs[static_cast<size_t>(ql.lane)]->lkey};
  unsigned int flags = bytes <= ql.max_inline ? IBV_SEND_INLINE : 0;
  if (eager::ring_write_signalled(seq, *place, ring_.end(), ring_.size())) flags |= IBV_SEND_SIGNALED;
  ibv_send_wr wr;
  fill_rdma_write_imm(&wr, kWrRing | seq, &sge, c_.remote().addr + offset,
                      c_.remote().devs[static_cast<size_t>(ql.remote_dev)].rkey, flags,
                      eager::imm_ring(*place, ring_.size()));
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(ql.qp.get(), &wr, &bad); rc != 0) {
    c_.pool().put(req);
    return c_.fail(Status::fail(ncclSystemError, post_finding("ibv_post_send (eager)", rc, c_.where())));
  }
  ring_.post(*place);
  ++sent;
  c_.stats().posted();
  ++(whole ? c_.stats().eager : c_.stats().rts);
  req->phandle = phandle;
  // Whole: the ring write on QP 0; else one event per data part post_data() gives each QP.
  c_.profile_start(index, phandle, IBV_WR_RDMA_WRITE_WITH_IMM, seq, size, whole);
  if (!whole) {
    waiting_[nwaiting_++] = static_cast<uint16_t>(index);
    mailbox_used_ |= uint64_t{1} << req->mailbox;
  }
  *out = req;
  return Status::success();
}

void EagerSend::start(SendReq* req, void* data, size_t size, VerbsMr* mr, bool whole, uint64_t rts_seq) {
  req->start(&c_, data, size, mr);
  req->tester = &protocol_tester<EagerSend, SendReq>;
  req->eager = whole;
  req->rts_seq = rts_seq;
  // A free entry (the caller checked !mailbox_full()), taken once the message is posted.
  req->mailbox = whole ? 0 : static_cast<uint32_t>(std::countr_one(mailbox_used_));
  req->pending = 0;
  req->posted = whole;
  req->posted_at = Connection::Clock::time_point{};
  if (!whole && c_.striped())  // read only then (VerbsSendComm::finish)
    for (auto& t : req->lane_done) t = Connection::Clock::time_point{};
}

std::optional<Status> EagerSend::send_ahead(int tag, void* data, size_t size, VerbsMr* mr, void* phandle,
                                            uint64_t* sent, Request** out) {
  const std::optional<eager::ClearToSend> cts = take_ahead(tag, *sent + 1, size);
  if (!cts) return std::nullopt;
  SendReq* req = c_.pool().get();
  if (req == nullptr) {
    ++c_.stats().not_ready;
    return Status::success();
  }
  start(req, data, size, mr, false, 0);
  if (Status st = post_data(req, *cts); !st.ok()) {
    if (req->pending == 0) c_.pool().put(req);  // else its completions still name it: the comm is failed
    return c_.fail(std::move(st));
  }
  ++*sent;
  mailbox_used_ |= uint64_t{1} << req->mailbox;
  c_.stats().posted();
  ++c_.stats().ahead;
  req->phandle = phandle;
  c_.profile_start(c_.pool().index_of(req), phandle, IBV_WR_RDMA_WRITE_WITH_IMM, *sent, size, false);
  *out = req;
  return Status::success();
}

// Posts the data of every waiting request whose clear-to-send arrived, oldest first: QP 0 carries the
// parts in posting order, and NCCL waits on its requests in the order it made them.
Status EagerSend::progress_now() {
  if (awaiting_held_) return Status::success();  // data waits for the failover's HELD
  size_t kept = 0;
  Status result = Status::success();
  for (size_t i = 0; i < nwaiting_; ++i) {
    SendReq& r = c_.pool().at(waiting_[i]);
    if (!result.ok() || mailbox_entry(c_.region(), r.mailbox).seq != r.rts_seq) {
      waiting_[kept++] = waiting_[i];
      continue;
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    // The receiver may rewrite its mailbox entry at any time: read it once, check and use the copy.
    if (Status st = post_data(&r, read_entry(mailbox_entry(c_.region(), r.mailbox))); !st.ok())
      result = c_.fail(std::move(st));
  }
  nwaiting_ = kept;
  return result;
}

Status EagerSend::post_data(SendReq* req, const eager::ClearToSend& c) {
  if (c.status == eager::kTooSmall || req->size > c.size)
    return Status::fail(ncclInvalidUsage, "internal.bad_argument",
                        fmt::format("isend of {} bytes but the receiver posted only {} bytes on {}",
                                    req->size, c.size, c_.where()));
  if (c.status != eager::kAccept || c.target >= eager::kMaxTargets)
    return Status::fail(
        ncclRemoteError, "peer.bad_handshake",
        fmt::format("clear-to-send with status {} for target {} on {}", c.status, c.target, c_.where()));
  req->dest = c.addr;
  req->target = c.target;
  req->cts_seq = static_cast<uint32_t>(c.seq);
  for (int d = 0; d < eager::kMaxDevs; ++d) req->dest_rkey[d] = c.rkey[d];
  req->data_live = true;
  // Timed from before the first part's post (send_comm.h SendReq::posted_at).
  const auto posting = Clock::now();
  const size_t nqps = c_.qps().size();
  for (size_t q = 0; q < nqps; ++q) {
    // After a failover a failed QP's part goes on a live one, its immediate naming the part.
    const bool moved = failed_qps_ != 0 && q < failover::kMaxQps && (failed_qps_ >> q & 1) != 0;
    const uint32_t imm = moved ? failover::replay_immediate(eager::kImmData, static_cast<uint16_t>(c.target),
                                                            static_cast<uint8_t>(q))
                               : eager::imm_target(c.target);
    if (Status st =
            post_part(req, q, moved ? failover::live_qp_for(q, failed_qps_, c_.qps().size()) : q, imm);
        !st.ok())
      return st;
  }
  req->posted = true;
  req->posted_at = posting;
  return Status::success();
}

Status EagerSend::post_part(SendReq* req, size_t part, size_t on_qp, uint32_t imm) {
  const QpLane& ql = c_.qps()[on_qp];
  size_t off = 0, len = 0;
  chunk_of(req->size, part, c_.qps().size(), &off, &len);
  ibv_sge sge{reinterpret_cast<uint64_t>(req->data) + off, static_cast<uint32_t>(len),
              len > 0 ? req->mr->mr[static_cast<size_t>(ql.lane)]->lkey : 0};
  ibv_send_wr wr;
  fill_rdma_write_imm(&wr, kWrSend | c_.pool().index_of(req), len > 0 ? &sge : nullptr, req->dest + off,
                      req->dest_rkey[static_cast<size_t>(ql.remote_dev)],
                      IBV_SEND_SIGNALED | (len > 0 && len <= ql.max_inline ? IBV_SEND_INLINE : 0), imm);
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(ql.qp.get(), &wr, &bad); rc != 0)
    return Status::fail(ncclSystemError, post_finding("ibv_post_send", rc, c_.where()));
  ++req->pending;
  return Status::success();
}

Status EagerSend::on_completion(const ibv_wc& wc) {
  const uint64_t kind = wc.wr_id & kWrKindMask;
  const uint64_t low = wc.wr_id & ~kWrKindMask;
  const bool data = kind == kWrSend && low < c_.pool().capacity();
  if (wc.status != IBV_WC_SUCCESS) [[unlikely]] {
    if (failover_absorbs(wc)) return Status::success();
    return Status::fail(ncclRemoteError, wc_finding(wc.status, wc.vendor_err, Phase::Send,
                                                    data ? c_.pool().at(low).size : 0, c_.where()));
  }
  if (kind == kWrRing && low <= ring_.posted()) {
    ring_retired_ = std::max(ring_retired_, low);
    return Status::success();
  }
  if (data && c_.pool().at(low).pending > 0) {
    // post_data posts every part before anything is polled, so 0 means the message is done.
    if (--c_.pool().at(low).pending == 0) mailbox_used_ &= ~(uint64_t{1} << c_.pool().at(low).mailbox);
    if (c_.striped() && c_.completion_lane() < kMaxDevsPerEnd)
      c_.pool().at(low).lane_done[c_.completion_lane()] = c_.completion_time();
    return Status::success();
  }
  if (kind == kWrProbe) return on_probe_done(low, true);
  return Status::fail(ncclInternalError, "internal.bad_argument",
                      fmt::format("unexpected send completion (wr_id {:#x}) on {}", wc.wr_id, c_.where()));
}

// Reads what the receiver sent out of band since the handshake: its CLOSING message (eager.h), or
// the end of the socket.
void EagerSend::read_closing(eager::CloseFacts* f) {
  while (!f->peer_gone) {
    std::optional<Message> m;
    if (!c_.oob().receive(&m).ok()) {
      f->peer_gone = true;  // closed, or bytes that are no message: nothing more will come
      return;
    }
    if (!m) return;
    if (m->type != MessageType::Closing) {
      f->peer_gone = true;
      return;
    }
    f->taken = m->released;  // the one read of it; close_verdict checks it against what was posted
  }
}

void EagerSend::drain() {
  eager::CloseFacts f;
  auto verdict = [&] {
    (void)ring_.credit(credit_word());  // a word beyond what was posted settles nothing
    f.posted = ring_.posted();
    f.acked = ring_retired_;
    f.credits = ring_.released();
    return eager::close_verdict(f);
  };
  if (!c_.error().ok() || c_.qps().empty() || verdict().kind == eager::CloseVerdict::kSettled) return;
  // A signalled zero-byte write completes only after every write posted before it on QP 0; a
  // receiver that closes first says out of band how many messages it took instead.
  const QpLane& ql = c_.qps()[0];
  ibv_send_wr wr{};
  wr.wr_id = kWrRing | ring_.posted();
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = c_.remote().addr;
  wr.wr.rdma.rkey = c_.remote().devs[static_cast<size_t>(ql.remote_dev)].rkey;
  ibv_send_wr* bad = nullptr;
  (void)ibv_post_send(ql.qp.get(), &wr, &bad);  // if it cannot be posted, the receiver's word decides
  const auto deadline = Clock::now() + std::min<Clock::duration>(c_.stall_budget(), std::chrono::seconds(5));
  eager::CloseVerdict v = verdict();
  while (v.kind == eager::CloseVerdict::kWait && Clock::now() < deadline) {
    (void)c_.poll();  // a failed write (the receiver's QP is gone) leaves the out-of-band word to decide
    read_closing(&f);
    v = verdict();
    if (v.kind == eager::CloseVerdict::kWait) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  if (v.kind == eager::CloseVerdict::kSettled) return;
  if (v.receiver_said)
    RS_WARN("NET/railscope : closing {}: the receiver closed without taking {} eager message(s)", c_.where(),
            v.missing);
  else
    RS_WARN("NET/railscope : closing {} with {} eager message(s) not acknowledged by the receiver",
            c_.where(), v.missing);
}

ncclResult_t EagerSend::test(SendReq* req, int* done, int* sizes) {
  *done = 0;
  if (req->eager) {  // carried whole: done once posted (isend polls the completions)
    if (!c_.error().ok()) return c_.error_result();
    c_.finish(req, Clock::time_point{}, done, sizes);  // nothing to time: done when posted
    return ncclSuccess;
  }
  if (!c_.drain_cqs(*this)) return c_.error_result();
  if (exchange_ != Exchange::kNone) [[unlikely]]
    if (Status st = failover_progress(); !st.ok()) return tested_result(st);
  if (Status st = progress(); !st.ok()) return tested_result(st);
  if (req->posted && req->pending == 0) {
    req->data_live = false;
    c_.send_done(req->posted_at);
    c_.finish(req, c_.striped() ? Clock::time_point{} : Clock::now(), done, sizes, req->lane_done);
    return ncclSuccess;
  }
  if (!c_.clock_due()) return c_.health_result();
  // A message held by a failover waits on the exchange's budget (failover_progress), not its own.
  return tested_result(req->posted && !awaiting_held_ ? c_.stall_check(req->size, req->posted_at)
                                                      : c_.watch(Clock::now()));
}

}  // namespace railscope::net::verbs
