#include "plugin/net/verbs/recv_comm.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <climits>

#include "plugin/net/verbs/diagnosis_map.h"

namespace railscope::net::verbs {

Status VerbsRecvComm::prepare() {
  int remote_write = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  for (auto& s : slots_) s.comm = this;
  if (eager_max > 0) {
    const size_t ring_bytes = eager::slot_stride(eager_max) * eager::kRingSlots;
    if (Status st = register_buffer(ring_bytes, remote_write, &ring_); !st.ok()) return st;
    return register_buffer(eager::kMailboxBytes + eager::kCreditWordBytes, IBV_ACCESS_LOCAL_WRITE, &replies_);
  }
  if (Status st = register_buffer(sizeof(SizesSlot) * kFifoDepth, remote_write, &sizes_); !st.ok()) return st;
  if (Status st = register_buffer(sizeof(CtsSlot) * kFifoDepth, IBV_ACCESS_LOCAL_WRITE, &cts_); !st.ok())
    return st;
  return Status::success();
}

uint64_t VerbsRecvComm::advertised_addr() const {
  return reinterpret_cast<uint64_t>(eager_max > 0 ? ring_.get() : sizes_.get());
}

std::vector<uint32_t> VerbsRecvComm::advertised_rkeys() const {
  std::vector<uint32_t> out;
  for (const auto& mr : (eager_max > 0 ? ring_ : sizes_).mrs) out.push_back(mr->rkey);
  return out;
}

Status VerbsRecvComm::irecv(std::span<const RecvBuffer> bufs, Request** out) {
  if (eager_max > 0) return eager_irecv(bufs, out);
  *out = nullptr;
  if (!error().ok()) return error();
  if (Status st = poll(); !st.ok()) return st;
  const auto index = static_cast<size_t>(tail_ % kFifoDepth);
  RecvSlot& r = slots_[index];
  if (r.in_use) {
    ++stats.not_ready;
    return watch();
  }
  const int n = static_cast<int>(bufs.size());
  for (int i = 0; i < n; ++i)
    if (bufs[static_cast<size_t>(i)].size > 0 && bufs[static_cast<size_t>(i)].mr == nullptr)
      return Status::fail(ncclInternalError, "internal.bad_argument", "irecv without a memory handle");
  // One zero-length receive per QP: each QP ends the message with a write with immediate.
  for (const auto& ql : qps) {
    if (Status st = post_recv(ql, kWrRecv | index); !st.ok()) return fail(std::move(st));
  }
  r.in_use = true;
  r.n = n;
  r.pending = static_cast<int>(qps.size());
  r.imm = 0;
  r.posted_at = Clock::now();
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
    r.events[i] = nullptr;
    profile_start(&r.events[i], &r.descr[i], b.phandle, IBV_WC_RECV_RDMA_WITH_IMM, seq, b.size);
  }
  const QpLane& ql = qps[static_cast<size_t>(tail_ % qps.size())];
  const auto lane = static_cast<size_t>(ql.lane);
  const auto rd = static_cast<size_t>(ql.remote_dev);
  const auto bytes = static_cast<uint32_t>(sizeof(CtsEntry) * static_cast<size_t>(n));
  ibv_sge sge{reinterpret_cast<uint64_t>(&cts), bytes, cts_.mrs[lane]->lkey};
  ibv_send_wr wr{};
  wr.wr_id = kWrCts | index;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.wr.rdma.remote_addr = remote.addr + sizeof(CtsSlot) * index;
  wr.wr.rdma.rkey = remote.devs[rd].rkey;
  if (bytes <= ql.max_inline) wr.send_flags |= IBV_SEND_INLINE;
  if (tail_ % kCtsSignalEvery == 0) wr.send_flags |= IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(ql.qp.get(), &wr, &bad); rc != 0)
    return fail(Status::fail(ncclSystemError, post_finding("ibv_post_send (clear-to-send)", rc, where())));
  ++tail_;
  stats.posted();
  *out = &r;
  return Status::success();
}

Status VerbsRecvComm::on_completion(const ibv_wc& wc) {
  if (eager_max > 0) return eager_completion(wc);
  uint64_t kind = wc.wr_id & kWrKindMask;
  auto index = static_cast<size_t>(wc.wr_id & ~kWrKindMask);
  if (wc.status != IBV_WC_SUCCESS || index >= slots_.size()) {
    Phase phase = kind == kWrCts ? Phase::Cts : Phase::Recv;
    return Status::fail(ncclRemoteError, wc_finding(wc.status, wc.vendor_err, phase, 0, where()));
  }
  if (kind == kWrCts) return Status::success();
  if (kind != kWrRecv || wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || !slots_[index].in_use)
    return Status::fail(ncclRemoteError, "peer.bad_handshake",
                        fmt::format("unexpected completion (opcode {}, wr_id {:#x}) on {}",
                                    static_cast<int>(wc.opcode), wc.wr_id, where()));
  RecvSlot& r = slots_[index];
  r.imm = ntohl(wc.imm_data);
  --r.pending;
  return Status::success();
}

Status VerbsRecvComm::test(RecvSlot* r, int* done, int* sizes) {
  if (eager_max > 0) return eager_test(r, done, sizes);
  *done = 0;
  if (!r->in_use)
    return Status::fail(ncclInternalError, "internal.bad_argument", "test of a finished receive");
  if (Status st = poll(); !st.ok()) return st;
  if (r->pending > 0) return watch();
  const auto index = static_cast<size_t>(r - slots_.data());
  if (r->imm & kSizesInArea) {
    const SizesSlot& s = static_cast<const SizesSlot*>(sizes_.get())[index];
    for (int i = 0; i < r->n; ++i)
      r->got[i] = static_cast<size_t>(static_cast<uint32_t>(s[static_cast<size_t>(i)]));
  } else {
    if (r->n != 1)
      return fail(Status::fail(
          ncclRemoteError, "peer.bad_handshake",
          fmt::format("grouped receive of {} completed without a sizes record on {}", r->n, where())));
    r->got[0] = r->imm;
  }
  for (int i = 0; i < r->n; ++i)
    if (r->got[i] > r->sizes[i])
      return fail(Status::fail(
          ncclRemoteError, "peer.bad_handshake",
          fmt::format("peer reports {} bytes for a {}-byte receive on {}", r->got[i], r->sizes[i], where())));
  complete(r, done, sizes);
  return Status::success();
}

Status VerbsRecvComm::post_recv(const QpLane& ql, uint64_t wr_id) {
  ibv_recv_wr wr{};
  wr.wr_id = wr_id;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_recv(ql.qp.get(), &wr, &bad); rc != 0)
    return Status::fail(ncclSystemError, post_finding("ibv_post_recv", rc, where()));
  return Status::success();
}

void VerbsRecvComm::complete(RecvSlot* r, int* done, int* sizes) {
  uint64_t total = 0;
  for (int i = 0; i < r->n; ++i) {
    if (sizes != nullptr) sizes[i] = static_cast<int>(std::min<size_t>(r->got[i], INT_MAX));
    total += r->got[i];
    if (r->events[i] != nullptr && profiler != nullptr)
      profiler(&r->events[i], ncclProfilerNetEventStop, nullptr, 0, nullptr);
  }
  stats.completed(
      total, static_cast<uint64_t>(
                 std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - r->posted_at).count()));
  r->in_use = false;
  *done = 1;
}

}  // namespace railscope::net::verbs
