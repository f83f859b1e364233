// The receiving half of the eager protocol (eager.h): standing receives on every QP, ring messages
// matched to posted receives by tag in order (or held until one is posted), clear-to-sends for large
// messages, and credits written back in batches.
#include <arpa/inet.h>
#include <fmt/format.h>

#include <climits>
#include <cstring>

#include "plugin/net/verbs/diagnosis_map.h"
#include "plugin/net/verbs/recv_comm.h"

namespace railscope::net::verbs {
namespace {

constexpr size_t kMailboxOffset = sizeof(CtsSlot) * kFifoDepth;  // in the sender's region (eager.h)

Status bad_peer(std::string text) {
  return Status::fail(ncclRemoteError, "peer.bad_handshake", std::move(text));
}

}  // namespace

Status VerbsRecvComm::post_receive_pool() {
  for (size_t q = 0; q < qps.size(); ++q)
    for (int i = 0; i < eager::kReceivePool; ++i)
      if (Status st = post_recv(qps[q], kWrRecv | q); !st.ok()) return st;
  return Status::success();
}

// Gives each QP back the standing receives its completions consumed, in one ibv_post_recv per QP.
Status VerbsRecvComm::repost_receives() {
  if (reposts_pending_ == 0) return Status::success();
  for (size_t q = 0; q < qps.size(); ++q) {
    const int n = reposts_due_[q];
    if (n == 0) continue;
    std::array<ibv_recv_wr, eager::kRepostBatch> wrs;  // the first n are filled
    for (int i = 0; i < n; ++i)
      wrs[static_cast<size_t>(i)] =
          ibv_recv_wr{kWrRecv | q, i + 1 < n ? &wrs[static_cast<size_t>(i) + 1] : nullptr, nullptr, 0};
    ibv_recv_wr* bad = nullptr;
    if (int rc = ibv_post_recv(qps[q].qp.get(), wrs.data(), &bad); rc != 0)
      return Status::fail(ncclSystemError, post_finding("ibv_post_recv", rc, where()));
    reposts_pending_ -= n;
    reposts_due_[q] = 0;
  }
  return Status::success();
}

const eager::Header& VerbsRecvComm::header(uint64_t seq) const {
  const size_t offset = static_cast<size_t>((seq - 1) % eager::kRingSlots) * eager::slot_stride(eager_max);
  return *reinterpret_cast<const eager::Header*>(static_cast<const char*>(ring_.get()) + offset);
}

Status VerbsRecvComm::eager_irecv(std::span<const RecvBuffer> bufs, Request** out) {
  *out = nullptr;
  if (!error().ok()) return error();
  if (Status st = poll(); !st.ok()) return st;
  if (Status st = repost_receives(); !st.ok()) return fail(std::move(st));
  RecvSlot& r = slots_[static_cast<size_t>(tail_ % kFifoDepth)];
  if (r.in_use) {
    ++stats.not_ready;
    return watch();
  }
  const int n = static_cast<int>(bufs.size());
  for (const RecvBuffer& b : bufs) {
    if (b.size > 0 && b.mr == nullptr)
      return Status::fail(ncclInternalError, "internal.bad_argument", "irecv without a memory handle");
    if (b.mr != nullptr && static_cast<VerbsMr*>(b.mr)->type != NCCL_PTR_HOST)
      return Status::fail(
          ncclInvalidArgument, "internal.bad_argument",
          fmt::format("irecv into device memory on a host-memory (eager) connection {}", where()));
  }
  r.in_use = true;
  r.seq = tail_ + 1;
  r.n = n;
  r.unfinished = n;
  r.posted_at = Clock::now();
  for (int i = 0; i < n; ++i) {
    const RecvBuffer& b = bufs[static_cast<size_t>(i)];
    r.data[i] = b.data;
    r.sizes[i] = b.size;
    r.tags[i] = b.tag;
    r.mrs[i] = static_cast<VerbsMr*>(b.mr);
    r.got[i] = 0;
    r.parts[i] = 0;
    r.state[i] = RecvSlot::kWaiting;
    r.events[i] = nullptr;
    profile_start(&r.events[i], &r.descr[i], b.phandle, IBV_WC_RECV_RDMA_WITH_IMM, r.seq, b.size);
  }
  ++tail_;
  stats.posted();
  *out = &r;
  // Messages that arrived before this receive was posted: no older receive waits for their tag (they
  // would have matched it), so each buffer takes the oldest held message with its tag.
  for (int i = 0; i < n; ++i)
    for (size_t u = 0; u < nunexpected_; ++u) {
      const uint64_t seq = unexpected_[u];
      if (header(seq).tag != r.tags[i]) continue;
      std::copy(unexpected_.begin() + static_cast<std::ptrdiff_t>(u + 1),
                unexpected_.begin() + static_cast<std::ptrdiff_t>(nunexpected_),
                unexpected_.begin() + static_cast<std::ptrdiff_t>(u));
      --nunexpected_;
      if (Status st = deliver(r, i, seq); !st.ok()) return fail(std::move(st));
      break;
    }
  if (Status st = return_credits(); !st.ok()) return fail(std::move(st));
  return Status::success();
}

bool VerbsRecvComm::find_waiting(int tag, RecvSlot** slot, int* buffer) {
  auto all_matched = [](const RecvSlot& r) {
    for (int i = 0; i < r.n; ++i)
      if (r.state[i] == RecvSlot::kWaiting) return false;
    return true;
  };
  for (; match_from_ < tail_; ++match_from_) {
    const RecvSlot& r = slots_[static_cast<size_t>(match_from_ % kFifoDepth)];
    if (r.in_use && r.seq == match_from_ + 1 && !all_matched(r)) break;
  }
  for (uint64_t s = match_from_; s < tail_; ++s) {
    RecvSlot& r = slots_[static_cast<size_t>(s % kFifoDepth)];
    if (!r.in_use || r.seq != s + 1) continue;
    for (int i = 0; i < r.n; ++i)
      if (r.state[i] == RecvSlot::kWaiting && r.tags[i] == tag) {
        *slot = &r;
        *buffer = i;
        return true;
      }
  }
  return false;
}

Status VerbsRecvComm::eager_completion(const ibv_wc& wc) {
  const uint64_t kind = wc.wr_id & kWrKindMask;
  const uint64_t low = wc.wr_id & ~kWrKindMask;
  if (wc.status != IBV_WC_SUCCESS)
    return Status::fail(ncclRemoteError, wc_finding(wc.status, wc.vendor_err,
                                                    kind == kWrCts ? Phase::Cts : Phase::Recv, 0, where()));
  if (kind == kWrCts) return Status::success();
  if (kind != kWrRecv || low >= qps.size() || wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM)
    return bad_peer(fmt::format("unexpected completion (opcode {}, wr_id {:#x}) on {}",
                                static_cast<int>(wc.opcode), wc.wr_id, where()));
  // The standing receive is given back later, in a batch (repost_receives: in irecv, off the path
  // from a message's arrival to the reply NCCL sends on it, or here once a batch is due).
  ++reposts_pending_;
  if (++reposts_due_[low] == eager::kRepostBatch)
    if (Status st = repost_receives(); !st.ok()) return st;
  const uint32_t imm = ntohl(wc.imm_data);
  if (imm & eager::kImmData) return on_data_part(imm & ~eager::kImmData);
  if (low != 0) return bad_peer(fmt::format("ring message on QP {} of {}", low, where()));
  return on_ring_message(imm);
}

Status VerbsRecvComm::on_ring_message(uint32_t imm) {
  const uint64_t seq = ring_arrived_ + 1;
  if (imm != eager::imm_ring(seq))
    return bad_peer(fmt::format("ring message in slot {} where slot {} was due on {}", imm,
                                eager::imm_ring(seq), where()));
  const eager::Header& h = header(seq);
  const bool data = h.kind == eager::kData, rts = h.kind == eager::kRequestToSend;
  if (h.seq != seq || (!data && !rts) || (data && h.size > eager_max) || (rts && h.size <= eager_max) ||
      h.req >= eager::kMaxTargets)
    return bad_peer(
        fmt::format("malformed ring message (seq {} of {} expected, kind {}, {} bytes, request {}) on {}",
                    h.seq, seq, h.kind, h.size, h.req, where()));
  ring_arrived_ = seq;
  RecvSlot* r = nullptr;
  int i = 0;
  if (find_waiting(h.tag, &r, &i)) {
    if (Status st = deliver(*r, i, seq); !st.ok()) return st;
    return return_credits();
  }
  if (nunexpected_ >= unexpected_.size())
    return bad_peer(fmt::format("more ring messages held than the ring has slots on {}", where()));
  unexpected_[nunexpected_++] = seq;
  return Status::success();
}

// Ring message `seq` is for buffer i of r: copy it out, or answer a request-to-send with a
// clear-to-send naming this buffer. Either way its ring slot is free afterwards.
Status VerbsRecvComm::deliver(RecvSlot& r, int i, uint64_t seq) {
  const eager::Header h = header(seq);
  const auto target =
      static_cast<uint32_t>(static_cast<size_t>(&r - slots_.data()) * kMaxRecvs + static_cast<size_t>(i));
  if (h.kind == eager::kData) {
    if (h.size > r.sizes[i])
      return Status::fail(ncclInvalidUsage, "internal.bad_argument",
                          fmt::format("the peer sent {} bytes (tag {}) to a {}-byte receive on {}", h.size,
                                      h.tag, r.sizes[i], where()));
    if (h.size > 0)
      std::memcpy(r.data[i], reinterpret_cast<const char*>(&header(seq)) + sizeof(eager::Header), h.size);
    r.got[i] = h.size;
    r.state[i] = RecvSlot::kDone;
    --r.unfinished;
    ++stats.eager;
  } else {
    ++stats.rts;
    auto* replies = static_cast<eager::ClearToSend*>(replies_.get());
    eager::ClearToSend& c = replies[target];
    c = eager::ClearToSend{};
    c.addr = reinterpret_cast<uint64_t>(r.data[i]);
    c.size = r.sizes[i];
    for (int d = 0; d < kMaxDevsPerEnd; ++d)
      c.rkey[d] = (r.mrs[i] != nullptr && d < r.mrs[i]->ndevs) ? r.mrs[i]->mr[d]->rkey : 0;
    c.target = target;
    c.status = h.size > r.sizes[i] ? eager::kTooSmall : eager::kAccept;
    c.seq = h.seq;
    r.got[i] = h.size;
    r.parts[i] = static_cast<int>(qps.size());
    r.state[i] = RecvSlot::kIncoming;
    if (Status st = post_control(&c, sizeof c, kMailboxOffset + sizeof c * h.req); !st.ok()) return st;
    if (c.status == eager::kTooSmall)
      return Status::fail(ncclInvalidUsage, "internal.bad_argument",
                          fmt::format("the peer sends {} bytes (tag {}) to a {}-byte receive on {}", h.size,
                                      h.tag, r.sizes[i], where()));
  }
  released_.release(seq);
  return Status::success();
}

Status VerbsRecvComm::on_data_part(uint32_t target) {
  const size_t s = target / kMaxRecvs, i = target % kMaxRecvs;
  RecvSlot* r = s < slots_.size() ? &slots_[s] : nullptr;
  if (r == nullptr || !r->in_use || static_cast<int>(i) >= r->n || r->state[i] != RecvSlot::kIncoming ||
      r->parts[i] <= 0)
    return bad_peer(fmt::format("data for receive target {}, which expects none, on {}", target, where()));
  if (--r->parts[i] == 0) {
    r->state[i] = RecvSlot::kDone;
    --r->unfinished;
  }
  return Status::success();
}

// An RDMA write from this side's control staging into the sender's region, on QP 0; one in
// kSignalEvery is signalled so the send queue drains.
Status VerbsRecvComm::post_control(const void* src, uint32_t bytes, uint64_t remote_offset) {
  const QpLane& ql = qps[0];
  ibv_sge sge{reinterpret_cast<uint64_t>(src), bytes, replies_.mrs[static_cast<size_t>(ql.lane)]->lkey};
  ibv_send_wr wr{};
  wr.wr_id = kWrCts;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.wr.rdma.remote_addr = remote.addr + remote_offset;
  wr.wr.rdma.rkey = remote.devs[static_cast<size_t>(ql.remote_dev)].rkey;
  if (bytes <= ql.max_inline) wr.send_flags |= IBV_SEND_INLINE;
  if (++control_posted_ % eager::kSignalEvery == 0) wr.send_flags |= IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(ql.qp.get(), &wr, &bad); rc != 0)
    return Status::fail(ncclSystemError, post_finding("ibv_post_send (control)", rc, where()));
  return Status::success();
}

Status VerbsRecvComm::return_credits() {
  const uint64_t released = released_.advance();
  if (!eager::credits_due(released, ring_arrived_, credits_returned_)) return Status::success();
  // The staging word only grows, so a write that reads it late still tells the truth.
  auto* word = reinterpret_cast<uint64_t*>(static_cast<char*>(replies_.get()) + eager::kMailboxBytes);
  *word = released;
  credits_returned_ = released;
  return post_control(word, sizeof *word, kMailboxOffset + eager::kMailboxBytes);
}

Status VerbsRecvComm::eager_test(RecvSlot* r, int* done, int* sizes) {
  *done = 0;
  if (!r->in_use)
    return Status::fail(ncclInternalError, "internal.bad_argument", "test of a finished receive");
  if (Status st = poll(); !st.ok()) return st;
  if (r->unfinished > 0) return watch();
  complete(r, done, sizes);
  return Status::success();
}

}  // namespace railscope::net::verbs
