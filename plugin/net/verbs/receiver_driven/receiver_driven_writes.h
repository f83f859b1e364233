// SPDX-License-Identifier: Apache-2.0
// The work requests a fully matched clear-to-send slot posts on one QP (receiver_driven.h,
// ReceiverDrivenSend::post): built here, apart from the posting, so that what reaches the provider can be
// checked without a device (tests/unit/net/receiver_driven_writes_test.cpp).
#pragma once

#include <arpa/inet.h>

#include <span>

#include "plugin/net/verbs/receiver_driven/receiver_driven_queues.h"
#include "plugin/net/verbs/receiver_driven/receiver_driven_targets.h"
#include "plugin/net/verbs/send_comm.h"

namespace railscope::net::verbs {

// The chain of work requests QP ql (q of nqps) posts for the slot's matched sends reqs, reqs[i] going
// to cts[i]: an RDMA write per send whose part (chunk_of) on this QP has bytes, inline when it fits, and
// a write with immediate ending the QP's part unless the slot's one data write carries the immediate
// itself; only the last is signalled, with wr_id. wrs and sges hold kMaxRecvs + 1 each and need not be
// initialised: each work request returned is written whole (zeroed, then filled), the others are not
// touched. Returns how many, wrs[0] heading the chain: work_requests_on_qp's count.
inline int qp_writes(std::span<SendReq* const> reqs, std::span<const CtsTarget> cts, const QpLane& ql,
                     size_t q, size_t nqps, const SizesWrite& sizes, uint64_t wr_id, ibv_send_wr* wrs,
                     ibv_sge* sges) {
  const auto lane = static_cast<size_t>(ql.lane);
  const auto rd = static_cast<size_t>(ql.remote_dev);
  int n = 0;
  const auto next_wr = [&]() -> ibv_send_wr& {
    ibv_send_wr& w = wrs[n];
    w = ibv_send_wr{};
    if (n > 0) wrs[n - 1].next = &w;
    return w;
  };
  for (size_t i = 0; i < reqs.size(); ++i) {
    const SendReq* r = reqs[i];
    size_t off = 0, len = 0;
    chunk_of(r->size, q, nqps, &off, &len);
    if (len == 0) continue;
    sges[n] = {reinterpret_cast<uint64_t>(r->data) + off, static_cast<uint32_t>(len), r->mr->mr[lane]->lkey};
    ibv_send_wr& w = next_wr();
    w.opcode = IBV_WR_RDMA_WRITE;
    w.sg_list = &sges[n];
    w.num_sge = 1;
    w.wr.rdma.remote_addr = cts[i].addr + off;
    w.wr.rdma.rkey = cts[i].rkey[rd];
    if (len <= ql.max_inline) w.send_flags = IBV_SEND_INLINE;
    ++n;
  }
  ibv_send_wr* last = nullptr;
  if (!sizes.in_area && n == 1) {  // the data write itself carries the immediate
    last = &wrs[0];
    last->imm_data = htonl(static_cast<uint32_t>(reqs[0]->size));
  } else {
    last = &next_wr();
    if (sizes.in_area && q == 0) {
      sges[n] = {sizes.local, sizes.bytes, sizes.lkey};
      last->sg_list = &sges[n];
      last->num_sge = 1;
      last->wr.rdma.remote_addr = sizes.remote;
      last->wr.rdma.rkey = sizes.area_rkey;
      if (sizes.bytes <= ql.max_inline) last->send_flags = IBV_SEND_INLINE;
    } else {
      last->wr.rdma.remote_addr = sizes.in_area ? sizes.area : cts[0].addr;
      last->wr.rdma.rkey = sizes.in_area ? sizes.area_rkey : cts[0].rkey[rd];
    }
    last->imm_data = htonl(sizes.in_area ? kSizesInArea : static_cast<uint32_t>(reqs[0]->size));
    ++n;
  }
  last->opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  last->send_flags |= IBV_SEND_SIGNALED;
  last->wr_id = wr_id;
  return n;
}

}  // namespace railscope::net::verbs
