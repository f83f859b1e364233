// SPDX-License-Identifier: Apache-2.0
// The receiving half of the receiver-driven protocol (receiver_driven.h).
#include "plugin/net/verbs/receiver_driven/receiver_driven.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <climits>

#include "plugin/net/verbs/rdma_write.h"
#include "plugin/net/verbs/watch/diagnosis_map.h"

namespace railscope::net::verbs {
namespace {
using Clock = Connection::Clock;
}  // namespace

Status ReceiverDrivenRecv::prepare() {
  c_.set_receiver(&protocol_receiver<ReceiverDrivenRecv>);
  c_.offer_failover();
  const int remote_write = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  if (Status st = c_.register_buffer(sizeof(SizesSlot) * kCtsSlots, remote_write, &sizes_); !st.ok())
    return st;
  return c_.register_buffer(sizeof(CtsSlot) * kCtsSlots, IBV_ACCESS_LOCAL_WRITE, &cts_);
}

std::vector<uint32_t> ReceiverDrivenRecv::advertised_rkeys() const {
  std::vector<uint32_t> out;
  for (const auto& mr : sizes_.mrs) out.push_back(mr->rkey);
  return out;
}

Status ReceiverDrivenRecv::irecv(std::span<const RecvBuffer> bufs, Request** out) {
  *out = nullptr;
  if (!c_.error().ok()) return c_.error();
  // The FIFO slot's previous receive is still in flight (kCtsSlots of them at most), or the send
  // queue of the QP the clear-to-send goes on is full: call again. Only the window depends on
  // completions (a receive's slot is freed by its test()), so only a full one polls: in a ping-pong
  // the poll of every irecv found nothing (bench/net_instructions), and test() polls for the rest.
  const auto index = static_cast<size_t>(tail_ % kCtsSlots);
  RecvSlot& r = c_.slots()[index];
  if (r.in_use) return c_.not_ready();
  // A connection that can fail over writes them all on QP 0, whose port's traffic never moves: a
  // clear-to-send is never lost with a port.
  const auto q = c_.can_fail_over() ? size_t{0} : static_cast<size_t>(tail_ % c_.qps().size());
  receiver_driven::CtsWindow& window = cts_windows_[q];
  if (!window.has_room()) {
    if (!c_.drain_cqs(*this)) return c_.error();
    if (!window.has_room()) return c_.not_ready();
  }
  const int n = static_cast<int>(bufs.size());
  // VerbsRecvComm::check_buffers' check, inline; it says what is wrong.
  for (const RecvBuffer& b : bufs)
    if (b.size > 0 && b.mr == nullptr) return VerbsRecvComm::check_buffers(bufs);
  // One zero-length receive per QP: each QP ends the message with a write with immediate. Posted
  // here, not through VerbsRecvComm::post_recv: a call and a Status per QP and message less.
  if (failed_qps_ == 0) [[likely]] {
    const auto& qps = c_.qps();
    for (size_t k = 0; k < qps.size(); ++k) {
      ibv_recv_wr wr{};
      wr.wr_id = kWrRecv | recv_wr_low(k, index);
      ibv_recv_wr* bad = nullptr;
      if (int rc = ibv_post_recv(qps[k].qp.get(), &wr, &bad); rc != 0) return c_.fail(recv_post_failed(rc));
    }
    progress_[index] = Progress{static_cast<int>(qps.size()), 0};
  } else if (Status st = post_live_receives(index); !st.ok()) {
    return c_.fail(std::move(st));
  }
  r.in_use = true;
  r.tester = &protocol_tester<ReceiverDrivenRecv, RecvSlot>;
  r.n = n;
  r.posted_at = c_.stats_on() ? Clock::now() : Clock::time_point{};  // for the stats line only
  const uint64_t seq = tail_ + 1;
  CtsSlot& cts = static_cast<CtsSlot*>(cts_.get())[index];
  for (int i = 0; i < n; ++i) {
    const RecvBuffer& b = bufs[static_cast<size_t>(i)];
    auto* mr = static_cast<VerbsMr*>(b.mr);
    CtsEntry& e = cts.e[i];
    e.addr = reinterpret_cast<uint64_t>(b.data);
    e.size = b.size;
    for (int d = 0; d < kMaxDevsPerEnd; ++d)
      e.rkey[d] = (mr != nullptr && d < mr->ndevs) ? mr->mr[d]->rkey : 0;
    e.nreqs = static_cast<uint32_t>(n);
    e.tag = b.tag;
    e.seq = seq;
    r.sizes[i] = b.size;
    r.phandles[i] = b.phandle;
    // The sender cuts its message over the QPs as chunk_of does: one event per QP's part of the buffer.
    if (b.phandle != nullptr && c_.profiler_on())
      c_.profile_start(c_.event_slot(r, i), b.phandle, IBV_WC_RECV_RDMA_WITH_IMM, seq, b.size);
  }
  const QpLane& ql = c_.qps()[q];
  const auto lane = static_cast<size_t>(ql.lane);
  const auto rd = static_cast<size_t>(ql.remote_dev);
  const auto bytes = static_cast<uint32_t>(sizeof(CtsEntry) * static_cast<size_t>(n));
  ibv_sge sge{reinterpret_cast<uint64_t>(&cts), bytes, cts_.mrs[lane]->lkey};
  // Signalled one in kCtsSignalEvery per QP: an unsignalled write leaves its QP's send queue only when a
  // later signalled one on the same QP completes.
  const unsigned int flags =
      (bytes <= ql.max_inline ? IBV_SEND_INLINE : 0) | (window.next_signalled() ? IBV_SEND_SIGNALED : 0);
  ibv_send_wr wr;
  fill_rdma_write(&wr, kWrCts | q, &sge, c_.remote().addr + sizeof(CtsSlot) * index,
                  c_.remote().devs[rd].rkey, flags);
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(ql.qp.get(), &wr, &bad); rc != 0)
    return c_.fail(
        Status::fail(ncclSystemError, post_finding("ibv_post_send (clear-to-send)", rc, c_.where())));
  window.posted();
  ++tail_;
  c_.stats().posted();
  *out = &r;
  return Status::success();
}

Status ReceiverDrivenRecv::on_completion(const ibv_wc& wc) {
  const uint64_t kind = wc.wr_id & kWrKindMask;
  const uint64_t low = wc.wr_id & ~kWrKindMask;
  if (wc.status != IBV_WC_SUCCESS) [[unlikely]]
    return on_failed_completion(wc);
  if (kind == kWrCts) {  // low: the QP; its oldest signalled clear-to-send write completed
    if (low < c_.qps().size() && cts_windows_[low].retire()) return Status::success();
    return cts_beyond_window(low);
  }
  if (kind != kWrRecv || wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM) return unexpected_completion(wc);
  const uint32_t imm = ntohl(wc.imm_data);
  if (is_replay_imm(imm) || qp0_count_ != 0) [[unlikely]]
    return on_moved_arrival(wc, low, imm);
  const size_t index = recv_wr_slot(low);
  if (index >= progress_.size() || !c_.slots()[index].in_use) return unexpected_completion(wc);
  arrived(index, recv_wr_qp(low), imm);
  return Status::success();
}

Status ReceiverDrivenRecv::failed_completion(const ibv_wc& wc) const {
  const Phase phase = (wc.wr_id & kWrKindMask) == kWrCts ? Phase::Cts : Phase::Recv;
  return Status::fail(ncclRemoteError, wc_finding(wc.status, wc.vendor_err, phase, 0, c_.where()));
}

Status ReceiverDrivenRecv::recv_post_failed(int rc) const {
  return Status::fail(ncclSystemError, post_finding("ibv_post_recv", rc, c_.where()));
}

Status ReceiverDrivenRecv::cts_beyond_window(size_t qp) const {
  return Status::fail(
      ncclInternalError, "internal.bad_argument",
      fmt::format("clear-to-send completion on QP {} beyond what was posted on {}", qp, c_.where()));
}

Status ReceiverDrivenRecv::unexpected_completion(const ibv_wc& wc) const {
  return Status::fail(ncclRemoteError, "peer.bad_handshake",
                      fmt::format("unexpected completion (opcode {}, wr_id {:#x}) on {}",
                                  static_cast<int>(wc.opcode), wc.wr_id, c_.where()));
}

ncclResult_t ReceiverDrivenRecv::test(RecvSlot* r, int* done, int* sizes) {
  *done = 0;
  if (!r->in_use) return VerbsRecvComm::finished_receive();
  if (!c_.drain_cqs(*this)) return c_.error_result();
  const size_t index = c_.index_of(*r);
  const Progress& p = progress_[index];
  if (p.pending > 0) return c_.idle_result();
  if (p.imm & kSizesInArea) {
    const SizesSlot& s = static_cast<const SizesSlot*>(sizes_.get())[index];
    for (int i = 0; i < r->n; ++i)
      r->got[i] = static_cast<size_t>(static_cast<uint32_t>(s[static_cast<size_t>(i)]));
  } else {
    if (r->n != 1) return tested_result(c_.fail(no_sizes_record(r->n)));
    r->got[0] = p.imm;
  }
  for (int i = 0; i < r->n; ++i)
    if (r->got[i] > r->sizes[i]) return tested_result(c_.fail(oversized(r->got[i], r->sizes[i])));
  c_.complete(r, done, sizes);
  return ncclSuccess;
}

Status ReceiverDrivenRecv::no_sizes_record(int n) const {
  return Status::fail(
      ncclRemoteError, "peer.bad_handshake",
      fmt::format("grouped receive of {} completed without a sizes record on {}", n, c_.where()));
}

Status ReceiverDrivenRecv::oversized(size_t got, size_t capacity) const {
  return Status::fail(
      ncclRemoteError, "peer.bad_handshake",
      fmt::format("peer reports {} bytes for a {}-byte receive on {}", got, capacity, c_.where()));
}

}  // namespace railscope::net::verbs
