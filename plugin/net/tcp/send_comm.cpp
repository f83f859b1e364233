// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/tcp/send_comm.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>

namespace railscope::net::tcp {

Status TcpSendComm::isend(void* data, size_t size, int tag, void* phandle, Request** out) {
  *out = nullptr;
  if (failed()) return failure();
  if (size > 0 && data == nullptr)
    return Status::fail(ncclInternalError, "internal.bad_argument", "isend of a null buffer");
  TcpSendReq* r = pool_.get();
  if (r == nullptr) {
    ++stats_.not_ready;
    return Status::success();  // all requests in flight: NCCL calls again
  }
  r->comm = this;
  r->data = static_cast<std::byte*>(data);
  r->size = size;
  r->ctrl_done = 0;
  r->pending.store(0, std::memory_order_relaxed);
  r->in_use = true;
  r->tester = &TcpSendComm::test_request;
  r->posted = Clock::now();
  uint64_t seq = seq_++;
  encode_header(MsgHeader{size, tag, static_cast<uint32_t>(seq)}, r->header.data());
  bool inline_data = size <= params_.inline_max;
  r->ctrl_total = kHeaderSize + (inline_data ? size : 0);
  if (!inline_data) queue_chunks(r->data, size, seq, &r->pending);
  ctrl_queue_[(ctrl_head_ + ctrl_count_) % kPoolSize] = r;
  ++ctrl_count_;
  stats_.posted();
  profile_start(params_.profiler, phandle, &r->event, &r->descr, ctrl_.get(), kProfileOpSend, size);
  *out = r;
  if (Status st = flush_ctrl(); !st.ok()) return st;
  progress_lanes();
  return Status::success();
}

ncclResult_t TcpSendComm::send(SendComm* comm, void* data, size_t size, int tag, MemHandle* /*mhandle*/,
                               void* phandle, Request** out) {
  return reported_result("isend", static_cast<TcpSendComm*>(comm)->isend(data, size, tag, phandle, out));
}

// Writes queued control bytes (header, then a small message's payload) in order until the socket
// would block.
Status TcpSendComm::flush_ctrl() {
  while (ctrl_count_ > 0) {
    TcpSendReq* r = ctrl_queue_[ctrl_head_];
    iovec iov[2];
    int n_iov = 0;
    if (r->ctrl_done < kHeaderSize)
      iov[n_iov++] = iovec{r->header.data() + r->ctrl_done, kHeaderSize - r->ctrl_done};
    if (r->ctrl_total > kHeaderSize) {
      size_t from = r->ctrl_done > kHeaderSize ? r->ctrl_done - kHeaderSize : 0;
      iov[n_iov++] = iovec{r->data + from, r->size - from};
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(n_iov);
    ssize_t n = ::sendmsg(ctrl_.get(), &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Status::success();
    if (n <= 0) return fail(io_failure("send (control)", n, errno, where(), params_.timeout_s));
    r->ctrl_done += static_cast<size_t>(n);
    if (r->ctrl_done == r->ctrl_total) {
      ctrl_head_ = (ctrl_head_ + 1) % kPoolSize;
      --ctrl_count_;
    }
  }
  return Status::success();
}

Status TcpSendComm::test(TcpSendReq* r, int* done, int* sizes) {
  *done = 0;
  if (!r->in_use) return Status::fail(ncclInternalError, "internal.bad_argument", "test of a finished send");
  if (failed()) return failure();
  periodic_stats();
  watch_acknowledgements();
  if (Status st = flush_ctrl(); !st.ok()) return st;
  progress_lanes();
  if (r->ctrl_done < r->ctrl_total || r->pending.load(std::memory_order_acquire) != 0)
    return Status::success();
  if (failed()) return failure();
  *done = 1;
  if (sizes != nullptr) sizes[0] = static_cast<int>(r->size);
  stats_.completed(r->size, micros_since(r->posted));
  profile_stop(params_.profiler, &r->event);
  r->in_use = false;
  pool_.put(r);
  return Status::success();
}

ncclResult_t TcpSendComm::test_request(Request* r, int* done, int* sizes) {
  auto* req = static_cast<TcpSendReq*>(r);
  return tested_result(req->comm->test(req, done, sizes));
}

}  // namespace railscope::net::tcp
