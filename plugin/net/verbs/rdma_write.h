// SPDX-License-Identifier: Apache-2.0
// One RDMA write work request for an RC QP, filled field by field. A value-initialised ibv_send_wr is
// 128 bytes zeroed (a `rep stos`) on every message; most of
// them are union members of other opcodes and QP types (UD address, atomics, memory-window binds,
// TSO), which a provider reads only for those (rdma-core: rxe's convert_send_wr, mlx5's
// _mlx5_post_send). Every field an RDMA write reads is set here, and the other union members are zeroed
// member by member (a handful of stores), so no byte left on the stack reaches the provider, as
// receiver_driven_writes.h promises for its requests.
#pragma once

#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include <cstdint>

namespace railscope::net::verbs {

// A write of sge's bytes (sge null: none) to remote_addr under rkey; flags are IBV_SEND_* bits.
inline void fill_rdma_write(ibv_send_wr* wr, uint64_t wr_id, ibv_sge* sge, uint64_t remote_addr,
                            uint32_t rkey, unsigned int flags) {
  wr->wr_id = wr_id;
  wr->next = nullptr;
  wr->sg_list = sge;
  wr->num_sge = sge != nullptr ? 1 : 0;
  wr->opcode = IBV_WR_RDMA_WRITE;
  wr->send_flags = flags;
  wr->imm_data = 0;
  wr->wr.atomic = {};  // the largest member of that union: none of it is left from before
  wr->wr.rdma.remote_addr = remote_addr;
  wr->wr.rdma.rkey = rkey;
  wr->qp_type.xrc.remote_srqn = 0;
  wr->bind_mw = {};  // the largest member of the memory-window / TSO union
}

// The same with an immediate (imm in host order): completes a receive at the other end.
inline void fill_rdma_write_imm(ibv_send_wr* wr, uint64_t wr_id, ibv_sge* sge, uint64_t remote_addr,
                                uint32_t rkey, unsigned int flags, uint32_t imm) {
  fill_rdma_write(wr, wr_id, sge, remote_addr, rkey, flags);
  wr->opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr->imm_data = htonl(imm);
}

}  // namespace railscope::net::verbs
