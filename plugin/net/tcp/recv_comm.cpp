// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/tcp/recv_comm.h"

#include <fmt/format.h>
#include <sys/socket.h>

#include <cerrno>

namespace railscope::net::tcp {

Status TcpRecvComm::irecv(std::span<const RecvBuffer> buffers, Request** out) {
  *out = nullptr;
  if (failed()) return failure();
  if (buffers.empty() || buffers.size() > static_cast<size_t>(kMaxRecvs))
    return Status::fail(ncclInternalError, "internal.bad_argument",
                        fmt::format("irecv of {} buffers (1..{})", buffers.size(), kMaxRecvs));
  TcpRecvReq* r = pool_.get();
  if (r == nullptr) {
    ++stats_.not_ready;
    return Status::success();
  }
  r->comm = this;
  r->n = static_cast<int>(buffers.size());
  r->nmatched = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    r->slots[i] =
        TcpRecvSlot{static_cast<std::byte*>(buffers[i].data), buffers[i].size, buffers[i].tag, 0, false};
    profile_start(params_.profiler, buffers[i].phandle, &r->events[i], &r->descr[i], ctrl_.get(),
                  kProfileOpRecv, buffers[i].size);
  }
  r->pending.store(0, std::memory_order_relaxed);
  r->in_use = true;
  r->tester = &TcpRecvComm::test_request;
  r->posted = Clock::now();
  unmatched_[(head_ + count_) % kPoolSize] = r;
  ++count_;
  stats_.posted();
  *out = r;
  return progress_ctrl();
}

ncclResult_t TcpRecvComm::receive(RecvComm* comm, std::span<const RecvBuffer> bufs, Request** out) {
  return reported_result("irecv", static_cast<TcpRecvComm*>(comm)->irecv(bufs, out));
}

ncclResult_t TcpRecvComm::flush(RecvComm* /*comm*/, std::span<const RecvBuffer> /*bufs*/, Request** out) {
  *out = nullptr;
  return ncclSuccess;
}

void TcpRecvComm::slot_filled(TcpRecvReq* r) {
  if (++r->nmatched == r->n) {
    head_ = (head_ + 1) % kPoolSize;
    --count_;
  }
}

Status TcpRecvComm::on_header(TcpRecvReq* r, const MsgHeader& h) {
  if (h.seq != static_cast<uint32_t>(seq_))
    return fail(
        Status::fail(ncclRemoteError, "peer.bad_handshake",
                     fmt::format("message {} from {} arrived as number {}: the control stream is out of "
                                 "step",
                                 seq_, where(), h.seq)));
  TcpRecvSlot* slot = nullptr;
  for (int i = 0; i < r->n; ++i)
    if (!r->slots[i].matched && r->slots[i].tag == h.tag) {
      slot = &r->slots[i];
      break;
    }
  if (slot == nullptr)
    return fail(
        Status::fail(ncclInvalidUsage, "internal.bad_argument",
                     fmt::format("message with tag {} from {} but the posted receive has no free buffer "
                                 "with that tag",
                                 h.tag, where())));
  if (h.size > slot->capacity)
    return fail(
        Status::fail(ncclInvalidUsage, "internal.bad_argument",
                     fmt::format("message of {} bytes (tag {}) from {} but the receiver posted only {} "
                                 "bytes",
                                 h.size, h.tag, where(), slot->capacity)));
  uint64_t seq = seq_++;
  slot->matched = true;
  slot->size = h.size;
  if (h.size == 0) {
    slot_filled(r);
  } else if (h.size <= params_.inline_max) {
    inline_slot_ = slot;
    inline_req_ = r;
    inline_got_ = 0;
  } else {
    queue_chunks(slot->data, h.size, seq, &r->pending);
    slot_filled(r);
  }
  return Status::success();
}

Status TcpRecvComm::progress_ctrl() {
  for (;;) {
    if (inline_slot_ != nullptr) {
      ssize_t n = ::recv(ctrl_.get(), inline_slot_->data + inline_got_, inline_slot_->size - inline_got_,
                         MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Status::success();
      if (n <= 0) return fail(io_failure("recv (control)", n, errno, where(), params_.timeout_s));
      inline_got_ += static_cast<size_t>(n);
      if (inline_got_ < inline_slot_->size) continue;
      TcpRecvReq* r = inline_req_;
      inline_slot_ = nullptr;
      inline_req_ = nullptr;
      slot_filled(r);
      continue;
    }
    if (count_ == 0) return Status::success();  // nothing posted: leave the bytes in the socket
    ssize_t n = ::recv(ctrl_.get(), header_.data() + header_got_, kHeaderSize - header_got_, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Status::success();
    if (n <= 0) return fail(io_failure("recv (control)", n, errno, where(), params_.timeout_s));
    header_got_ += static_cast<size_t>(n);
    if (header_got_ < kHeaderSize) continue;
    header_got_ = 0;
    if (Status st = on_header(unmatched_[head_], decode_header(header_.data())); !st.ok()) return st;
  }
}

Status TcpRecvComm::test(TcpRecvReq* r, int* done, int* sizes) {
  *done = 0;
  if (!r->in_use)
    return Status::fail(ncclInternalError, "internal.bad_argument", "test of a finished receive");
  if (failed()) return failure();
  periodic_stats();
  if (Status st = progress_ctrl(); !st.ok()) return st;
  progress_lanes();
  if (r->nmatched < r->n || r->pending.load(std::memory_order_acquire) != 0) return Status::success();
  if (failed()) return failure();
  *done = 1;
  size_t total = 0;
  for (int i = 0; i < r->n; ++i) {
    if (sizes != nullptr) sizes[i] = static_cast<int>(r->slots[i].size);
    total += r->slots[i].size;
    profile_stop(params_.profiler, &r->events[i]);
  }
  stats_.completed(total, micros_since(r->posted));
  r->in_use = false;
  pool_.put(r);
  return Status::success();
}

ncclResult_t TcpRecvComm::test_request(Request* r, int* done, int* sizes) {
  auto* req = static_cast<TcpRecvReq*>(r);
  return tested_result(req->comm->test(req, done, sizes));
}

}  // namespace railscope::net::tcp
