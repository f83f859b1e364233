// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/gpu/gdr_flush_qp.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "plugin/net/verbs/setup/discovery.h"
#include "plugin/net/verbs/setup/mr_cache.h"
#include "plugin/net/verbs/setup/qp.h"
#include "plugin/net/verbs/watch/diagnosis_map.h"
#include "railscope/core/log.h"
#include "railscope/ibv/ibv.h"

namespace railscope::net::verbs {
namespace {

constexpr uint32_t kReadBytes = 1;  // NCCL's IB transport reads one byte too
constexpr int kQpDepth = GdrFlush::kSlots;

std::string flush_where(const NetPort& port, uint32_t qpn) {
  return fmt::format("{}:{} GID[{}] {} (flush loopback QP {:#x})", port.dev_name, port.port, port.gid_index,
                     port.gid.to_string(), qpn);
}

}  // namespace

Status FlushQp::create(const NetPort& port, const LinkParams& link, std::unique_ptr<FlushQp>* out) {
  auto f = std::make_unique<FlushQp>();
  f->port_ = &port;
  if (Status st = create_cq(port, kQpDepth, &f->cq_); !st.ok()) return st;
  QpCaps caps;
  caps.max_send_wr = kQpDepth;
  caps.max_recv_wr = 1;
  caps.max_inline = 0;
  uint32_t inline_size = 0;
  if (Status st = create_rc_qp(port, f->cq_.get(), caps, &f->qp_, &inline_size); !st.ok()) return st;
  const std::string where = flush_where(port, f->qp_->qp_num);
  // INIT with remote read allowed: the QP is its own responder.
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = static_cast<uint8_t>(port.port);
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
  if (int rc = ibv::api()->modify_qp(f->qp_.get(), &a,
                                     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
      rc != 0)
    return Status::fail(ncclSystemError, modify_qp_finding(rc, "INIT", where));
  if (Status st = qp_to_rtr(f->qp_.get(), port, port, f->qp_->qp_num, port.active_mtu, link, where); !st.ok())
    return st;
  if (Status st = qp_to_rts(f->qp_.get(), link, where); !st.ok()) return st;
  void* mem = std::aligned_alloc(kPageSize, kPageSize);
  if (mem == nullptr) return Status::fail(ncclSystemError, "internal.unknown_diagnosis", "out of memory");
  std::memset(mem, 0, kPageSize);
  f->sink_.mem.reset(mem);
  f->sink_.size = kPageSize;
  ibv_mr* mr = ibv::api()->reg_mr(port.pd.get(), mem, kPageSize, IBV_ACCESS_LOCAL_WRITE);
  if (mr == nullptr) {
    int err = errno;
    return Status::fail(ncclSystemError, reg_mr_finding(err, kPageSize, memlock_limit_kib(), where));
  }
  f->sink_.mrs.emplace_back(mr);
  *out = std::move(f);
  return Status::success();
}

Status FlushQp::post_read(uint64_t addr, uint32_t rkey, uint64_t wr_id) {
  ibv_sge sge{reinterpret_cast<uint64_t>(sink_.get()), kReadBytes, sink_.mrs[0]->lkey};
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = addr;
  wr.wr.rdma.rkey = rkey;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(qp_.get(), &wr, &bad); rc != 0)
    return Status::fail(ncclSystemError,
                        post_finding("ibv_post_send (flush read)", rc, flush_where(*port_, qp_->qp_num)));
  return Status::success();
}

Status FlushQp::failed_completion(const ibv_wc& wc) const {
  return Status::fail(ncclSystemError, wc_finding(wc.status, wc.vendor_err, Phase::Flush, kReadBytes,
                                                  flush_where(*port_, qpn())));
}

Status FlushQp::poll(std::array<uint64_t, 16>* ids, int* n) {
  ibv_wc wcs[16];
  *n = 0;
  int got = ibv_poll_cq(cq_.get(), 16, wcs);
  if (got < 0)
    return Status::fail(ncclSystemError, "wc.error",
                        fmt::format("ibv_poll_cq failed on {}", flush_where(*port_, qpn())));
  for (int i = 0; i < got; ++i) {
    if (wcs[i].status != IBV_WC_SUCCESS) return failed_completion(wcs[i]);
    (*ids)[static_cast<size_t>((*n)++)] = wcs[i].wr_id;
  }
  return Status::success();
}

Status GdrFlush::iflush(Connection& c, std::span<const RecvBuffer> bufs, Request** out) {
  *out = nullptr;
  if (!c.error().ok()) return c.error();
  if (!decided_) {
    int bits = ~0;
    for (const auto& lane : c.lanes()) bits &= lane.port->gdr.ptr_support;
    policy_ = gpu::gdr_flush_policy(c.lanes().empty() ? NCCL_PTR_HOST : bits);
    mode_ = flush_mode_from_env();
    decided_ = true;
  }
  const RecvBuffer* b = nullptr;
  for (const auto& x : bufs)
    if (x.size > 0 && x.mr != nullptr) {
      b = &x;
      break;
    }
  if (b == nullptr) return Status::success();
  auto* mr = static_cast<VerbsMr*>(b->mr);
  if (!flush_wanted(mode_, policy_, mr->type != NCCL_PTR_HOST)) return Status::success();
  if (qps_.empty()) {
    for (const auto& lane : c.lanes()) {
      std::unique_ptr<FlushQp> q;
      if (Status st = FlushQp::create(*lane.port, c.link(), &q); !st.ok()) {
        qps_.clear();
        return c.fail(std::move(st));
      }
      qps_.push_back(std::move(q));
    }
    RS_INFO(NCCL_NET, "NET/railscope : flush loopback QP(s) ready on {} (RAILSCOPE_NET_FLUSH={}; {})",
            c.where(), to_string(mode_), policy_.reason);
  }
  FlushReq& r = slots_[static_cast<size_t>(next_ % kSlots)];
  if (r.in_use)
    return c.fail(Status::fail(ncclInternalError, "internal.bad_argument",
                               fmt::format("more than {} flushes in flight on {}", kSlots, c.where())));
  const auto index = static_cast<uint64_t>(&r - slots_.data());
  const int n = std::min(mr->ndevs, static_cast<int>(qps_.size()));
  for (int i = 0; i < n; ++i)
    if (Status st = qps_[static_cast<size_t>(i)]->post_read(reinterpret_cast<uint64_t>(b->data),
                                                            mr->mr[i]->rkey, index);
        !st.ok())
      return c.fail(std::move(st));
  r.owner = this;
  r.connection = &c;
  r.in_use = true;
  r.tester = &GdrFlush::test_request;
  r.pending = n;
  ++next_;
  *out = &r;
  return Status::success();
}

Status GdrFlush::poll(Connection& c) {
  std::array<uint64_t, 16> ids{};
  for (auto& q : qps_) {
    for (;;) {
      int n = 0;
      if (Status st = q->poll(&ids, &n); !st.ok()) return c.fail(std::move(st));
      for (int i = 0; i < n; ++i) {
        const auto index = static_cast<size_t>(ids[static_cast<size_t>(i)]);
        if (index < slots_.size() && slots_[index].pending > 0) --slots_[index].pending;
      }
      if (n < 16) break;
    }
  }
  return Status::success();
}

Status GdrFlush::test(Connection& c, FlushReq* r, int* done) {
  *done = 0;
  if (!r->in_use) return Status::fail(ncclInternalError, "internal.bad_argument", "test of a finished flush");
  if (!c.error().ok()) return c.error();
  if (Status st = poll(c); !st.ok()) return st;
  if (r->pending > 0) return c.watch();
  r->in_use = false;
  *done = 1;
  return Status::success();
}

ncclResult_t GdrFlush::test_request(Request* r, int* done, int* /*sizes*/) {
  auto* f = static_cast<FlushReq*>(r);
  return tested_result(f->owner->test(*f->connection, f, done));
}

}  // namespace railscope::net::verbs
