// SPDX-License-Identifier: Apache-2.0
// iflush for GPUDirect receives: a loopback RC QP per lane (connected to itself on the same device,
// port and GID) that RDMA-reads one byte of the received buffer. A read is ordered after the NIC's
// earlier writes to that memory, so once it completes the data NCCL is about to read is visible
// (NCCL's IB transport does the same). Per receive comm, created lazily at the first iflush that
// needs it; which iflush needs it is flush_wanted() (RAILSCOPE_NET_FLUSH over gdr_flush_policy of
// the comm's ports and the memory handle's type).
#pragma once

#include <array>
#include <memory>
#include <span>
#include <vector>

#include "plugin/net/verbs/connection.h"
#include "plugin/net/verbs/gpu/gdr_support.h"

namespace railscope::net::verbs {

class GdrFlush;

struct FlushReq : Request {
  // Its tester (transport.h) is GdrFlush::test_request, set by iflush.
  GdrFlush* owner = nullptr;
  Connection* connection = nullptr;  // the receive comm the flush belongs to
  bool in_use = false;
  int pending = 0;  // reads not yet completed (one per lane)
};

// One loopback QP with its own CQ and a registered sink the reads land in.
class FlushQp {
 public:
  static Status create(const NetPort& port, const LinkParams& link, std::unique_ptr<FlushQp>* out);
  Status post_read(uint64_t addr, uint32_t rkey, uint64_t wr_id);
  // Up to 16 completions: their wr_ids in ids[0..*n). A failed read is a finding (Phase::Flush).
  Status poll(std::array<uint64_t, 16>* ids, int* n);
  uint32_t qpn() const { return qp_->qp_num; }

 private:
  Status failed_completion(const ibv_wc& wc) const;
  const NetPort* port_ = nullptr;
  CqPtr cq_;
  QpPtr qp_;
  RegisteredBuffer sink_;
};

class GdrFlush {
 public:
  static constexpr int kSlots = 64;  // NCCL keeps at most NCCL_NET_MAX_REQUESTS flushes in flight

  // *out = nullptr when nothing needs flushing (no data, or flush_wanted says no).
  Status iflush(Connection& c, std::span<const RecvBuffer> bufs, Request** out);
  Status test(Connection& c, FlushReq* r, int* done);
  static ncclResult_t test_request(Request* r, int* done, int* sizes);  // FlushReq's tester
  bool active() const { return !qps_.empty(); }

 private:
  Status poll(Connection& c);
  bool decided_ = false;
  FlushMode mode_ = FlushMode::Auto;
  gpu::FlushPolicy policy_;
  std::vector<std::unique_ptr<FlushQp>> qps_;  // one per lane, lazily
  std::array<FlushReq, kSlots> slots_{};
  uint64_t next_ = 0;
};

}  // namespace railscope::net::verbs
