// SPDX-License-Identifier: Apache-2.0
// The sending half of the receiver-driven protocol (receiver_driven.h).
#include "plugin/net/verbs/receiver_driven/receiver_driven.h"
#include "plugin/net/verbs/receiver_driven/receiver_driven_writes.h"

#include <fmt/format.h>

#include <atomic>
#include <climits>

#include "plugin/net/verbs/watch/diagnosis_map.h"

namespace railscope::net::verbs {
namespace {
using Clock = Connection::Clock;
}  // namespace

Status ReceiverDrivenSend::prepare() {
  c_.set_sender(&protocol_sender<ReceiverDrivenSend>);
  c_.offer_failover();
  return c_.register_buffer(sizeof(SizesSlot) * kCtsSlots, IBV_ACCESS_LOCAL_WRITE, &sizes_);
}

void ReceiverDrivenSend::reuse(Slot& s, uint64_t seq, uint32_t nreqs, const volatile CtsEntry* fifo) {
  s.seq = seq;
  s.nreqs = static_cast<int>(nreqs);
  s.matched = 0;
  s.live_reqs = 0;
  s.pending = 0;
  s.wrs = 0;
  s.posted = false;
  s.moved = 0;
  s.posted_at = {};
  for (auto& t : s.lane_done) t = {};
  for (auto& r : s.reqs) r = nullptr;
  for (uint32_t i = 0; i < nreqs; ++i) {
    CtsTarget& t = s.cts[i];
    t.addr = fifo[i].addr;
    t.size = fifo[i].size;
    for (int d = 0; d < kMaxDevsPerEnd; ++d) t.rkey[d] = fifo[i].rkey[d];
    t.tag = fifo[i].tag;
  }
}

Status ReceiverDrivenSend::isend(void* data, size_t size, int tag, VerbsMr* mr, void* phandle,
                                 Request** out) {
  *out = nullptr;
  if (!c_.error().ok()) return c_.error();
  // No poll here: the clear-to-send is an RDMA write into the FIFO (memory, no completion), and the
  // completions of posted slots matter only to the budget below, which polls when it is short; test()
  // polls for everything else (a completion error surfaces there).
  const uint64_t seq = head_ + 1;
  const int index = static_cast<int>(head_ % kCtsSlots);
  Slot& s = slots_[static_cast<size_t>(index)];
  // The previous use of this slot is not reported done yet.
  if (s.seq != seq && s.live_reqs > 0) return c_.not_ready();
  auto* fifo = static_cast<volatile CtsEntry*>(static_cast<CtsEntry*>(c_.region().get())) + index * kMaxRecvs;
  // No clear-to-send yet: make sure the port and the peer are still there.
  if (fifo[0].seq != seq) return c_.not_ready();
  uint32_t nreqs = fifo[0].nreqs;
  if (nreqs < 1 || nreqs > kMaxRecvs)
    return c_.fail(
        Status::fail(ncclRemoteError, "peer.bad_handshake",
                     fmt::format("clear-to-send slot {} from {} announces {} receives (1..{} allowed)", seq,
                                 c_.oob().peer(), nreqs, kMaxRecvs)));
  for (uint32_t i = 0; i < nreqs; ++i)
    if (fifo[i].seq != seq) return Status::success();  // the slot is still being written
  std::atomic_thread_fence(std::memory_order_acquire);
  if (s.seq != seq) reuse(s, seq, nreqs, fifo);
  int entry = -1;
  for (int i = 0; i < s.nreqs; ++i)
    if (s.reqs[i] == nullptr && s.cts[i].tag == tag) {
      entry = i;
      break;
    }
  if (entry < 0) return Status::success();  // no receive with this tag in the oldest slot yet
  if (size > s.cts[entry].size)
    return c_.fail(
        Status::fail(ncclInvalidUsage, "internal.bad_argument",
                     fmt::format("isend of {} bytes (tag {}) but the receiver posted only {} bytes on {}",
                                 size, tag, s.cts[entry].size, c_.where())));
  if (size > 0 && mr == nullptr)
    return Status::fail(ncclInternalError, "internal.bad_argument", "isend without a memory handle");
  // The send that completes the slot posts its work requests: only while the send queues hold them.
  // Completions retire posted slots' work requests: poll for them when the budget is short.
  if (s.matched + 1 == s.nreqs) {
    const size_t first = entry == 0 ? size : s.reqs[0]->size;
    const bool record = receiver_driven::needs_sizes_record(static_cast<size_t>(s.nreqs), first);
    if ((failed_qps_ | resumed_qps_) == 0) [[likely]] {
      s.wrs = receiver_driven::slot_work_requests(nreqs, record);
    } else {
      // While the two ends agree on a failover or a restored port, no new slot is posted.
      if (holds_slots()) return c_.not_ready();
      s.wrs = moved_work_requests(nreqs, moved_for(seq));
    }
    if (!budget_.fits(s.wrs)) {
      if (!c_.drain_cqs(*this)) return c_.error();
      if (!budget_.fits(s.wrs)) return c_.not_ready();
    }
  }
  SendReq* req = c_.pool().get();
  if (req == nullptr) {
    ++c_.stats().not_ready;
    return Status::success();
  }
  req->start(&c_, data, size, mr);
  req->tester = &protocol_tester<ReceiverDrivenSend, SendReq>;
  req->slot = index;
  s.reqs[entry] = req;
  ++s.matched;
  ++s.live_reqs;
  c_.stats().posted();
  req->phandle = phandle;
  // One QP event per part: post() gives QP q the part chunk_of names.
  if (phandle != nullptr && c_.profiler_on())
    c_.profile_start(c_.pool().index_of(req), phandle, IBV_WR_RDMA_WRITE_WITH_IMM, seq, size);
  if (s.matched == s.nreqs) {
    if (Status st = post(s, index); !st.ok()) return c_.fail(std::move(st));
    ++head_;
  }
  *out = req;
  return Status::success();
}

Status ReceiverDrivenSend::post(Slot& s, int index) {
  if ((failed_qps_ | resumed_qps_) != 0) [[unlikely]]
    return post_moved(s, index);
  const size_t nqps = c_.qps().size();
  const auto nreqs = static_cast<size_t>(s.nreqs);
  SizesWrite sizes{};
  sizes.in_area = receiver_driven::needs_sizes_record(nreqs, s.reqs[0]->size);
  auto* record = static_cast<SizesSlot*>(sizes_.get()) + index;
  if (sizes.in_area) {
    for (size_t i = 0; i < nreqs; ++i) (*record)[i] = static_cast<int32_t>(s.reqs[i]->size);
    sizes.local = reinterpret_cast<uint64_t>(record->data());
    sizes.bytes = static_cast<uint32_t>(sizeof(int32_t) * nreqs);
    sizes.area = c_.remote().addr;
    sizes.remote = c_.remote().addr + sizeof(SizesSlot) * static_cast<size_t>(index);
  }
  const auto posting = Clock::now();
  for (size_t q = 0; q < nqps; ++q) {
    const QpLane& ql = c_.qps()[q];
    if (sizes.in_area) {
      sizes.lkey = sizes_.mrs[static_cast<size_t>(ql.lane)]->lkey;
      sizes.area_rkey = c_.remote().devs[static_cast<size_t>(ql.remote_dev)].rkey;
    }
    // Only the work requests posted are written: zeroing all kMaxRecvs + 1 would write over a KiB per QP
    // and message that the provider never reads.
    ibv_send_wr wrs[kMaxRecvs + 1];
    ibv_sge sges[kMaxRecvs + 1];
    qp_writes(std::span(s.reqs, nreqs), std::span(s.cts, nreqs), ql, q, nqps, sizes,
              kWrSend | static_cast<uint64_t>(index), wrs, sges);
    ibv_send_wr* bad = nullptr;
    if (int rc = ibv_post_send(ql.qp.get(), &wrs[0], &bad); rc != 0)
      return Status::fail(ncclSystemError, post_finding("ibv_post_send", rc, c_.where()));
  }
  mark_posted(s, static_cast<int>(nqps), posting);
  return Status::success();
}

void ReceiverDrivenSend::mark_posted(Slot& s, int chains, Clock::time_point posting) {
  s.pending = chains;
  budget_.posted(s.wrs);
  s.posted = true;
  s.posted_at = posting;
  for (int i = 0; i < s.nreqs; ++i) s.reqs[i]->posted_at = s.posted_at;
}

Status ReceiverDrivenSend::on_completion(const ibv_wc& wc) {
  const auto index = static_cast<size_t>(wc.wr_id & ~kWrKindMask);
  if (wc.status != IBV_WC_SUCCESS || (wc.wr_id & kWrKindMask) != kWrSend || index >= slots_.size())
      [[unlikely]] {
    if (wc.status != IBV_WC_SUCCESS && failover_absorbs(wc)) return Status::success();
    if (wc.status == IBV_WC_SUCCESS && (wc.wr_id & kWrKindMask) == kWrProbe)
      return on_probe_done(index, true);
    return failed_completion(wc);
  }
  Slot& s = slots_[index];
  // The slot's last QP completed: every work request it posted is retired.
  if (s.pending > 0 && --s.pending == 0 && !budget_.retired(s.wrs)) return beyond_budget(index);
  if (c_.striped() && c_.completion_lane() < kMaxDevsPerEnd)
    s.lane_done[c_.completion_lane()] = c_.completion_time();
  return Status::success();
}

Status ReceiverDrivenSend::failed_completion(const ibv_wc& wc) const {
  const auto index = static_cast<size_t>(wc.wr_id & ~kWrKindMask);
  size_t bytes = 0;
  if (index < slots_.size())
    for (int i = 0; i < slots_[index].nreqs; ++i)
      if (slots_[index].reqs[i] != nullptr) bytes += slots_[index].reqs[i]->size;
  return Status::fail(ncclRemoteError, wc_finding(wc.status, wc.vendor_err, Phase::Send, bytes, c_.where()));
}

Status ReceiverDrivenSend::beyond_budget(size_t index) const {
  return Status::fail(
      ncclInternalError, "internal.bad_argument",
      fmt::format("send completion of slot {} beyond what was posted on {}", index, c_.where()));
}

ncclResult_t ReceiverDrivenSend::test(SendReq* req, int* done, int* sizes) {
  *done = 0;
  if (!c_.drain_cqs(*this)) return c_.error_result();
  Slot& s = slots_[static_cast<size_t>(req->slot)];
  if (s.posted && s.pending == 0) {
    c_.send_done(s.posted_at);
    for (int i = 0; i < s.nreqs; ++i)
      if (s.reqs[i] == req) s.reqs[i] = nullptr;
    --s.live_reqs;
    if (s.live_reqs == 0) s.posted = false;
    c_.finish(req, c_.striped() ? Clock::time_point{} : Clock::now(), done, sizes, s.lane_done);
    return ncclSuccess;
  }
  if (!c_.clock_due()) return c_.health_result();
  // A slot held by a failover waits on the exchange's budget (poll_notices), not its own.
  return tested_result(s.posted && !s.held ? c_.stall_check(req->size, s.posted_at) : c_.watch(Clock::now()));
}

}  // namespace railscope::net::verbs
