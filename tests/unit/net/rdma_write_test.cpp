// SPDX-License-Identifier: Apache-2.0
// The RDMA write work requests the data path builds without zeroing the whole ibv_send_wr
// (plugin/net/verbs/rdma_write.h): every field a provider reads for an RDMA write on an RC QP must be
// set, and every other one zero, whatever the stack held before, since nothing else clears it.
#include "plugin/net/verbs/rdma_write.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>

#include "tests/unit/net/send_wr_checks.h"

namespace railscope::net::verbs {
namespace {

// A work request as an uninitialised stack slot may hold it: every byte 0xab.
ibv_send_wr garbage() {
  ibv_send_wr wr;
  std::memset(&wr, 0xab, sizeof wr);
  return wr;
}

TEST(RdmaWrite, SetsEveryFieldAWriteReads) {
  ibv_sge sge{0x1000, 64, 7};
  ibv_send_wr wr = garbage();
  fill_rdma_write(&wr, 42, &sge, 0xfeed0000, 0x1234, IBV_SEND_INLINE | IBV_SEND_SIGNALED);
  EXPECT_EQ(wr.wr_id, 42u);
  EXPECT_EQ(wr.next, nullptr);
  EXPECT_EQ(wr.sg_list, &sge);
  EXPECT_EQ(wr.num_sge, 1);
  EXPECT_EQ(wr.opcode, IBV_WR_RDMA_WRITE);
  EXPECT_EQ(wr.send_flags, static_cast<unsigned int>(IBV_SEND_INLINE | IBV_SEND_SIGNALED));
  EXPECT_EQ(wr.imm_data, 0u);
  EXPECT_EQ(wr.wr.rdma.remote_addr, 0xfeed0000u);
  EXPECT_EQ(wr.wr.rdma.rkey, 0x1234u);
  EXPECT_EQ(wr.qp_type.xrc.remote_srqn, 0u);
  expect_rest_zero(wr);
}

TEST(RdmaWrite, WithImmediateCarriesItInNetworkOrderAndMayHaveNoBytes) {
  ibv_send_wr wr = garbage();
  fill_rdma_write_imm(&wr, 7, nullptr, 0x2000, 9, IBV_SEND_SIGNALED, 0x01020304);
  EXPECT_EQ(wr.opcode, IBV_WR_RDMA_WRITE_WITH_IMM);
  EXPECT_EQ(wr.imm_data, htonl(0x01020304));
  EXPECT_EQ(wr.sg_list, nullptr);  // a zero-byte write: no scatter/gather entry at all
  EXPECT_EQ(wr.num_sge, 0);
  EXPECT_EQ(wr.next, nullptr);
  EXPECT_EQ(wr.send_flags, static_cast<unsigned int>(IBV_SEND_SIGNALED));
  EXPECT_EQ(wr.wr.rdma.remote_addr, 0x2000u);
  EXPECT_EQ(wr.wr.rdma.rkey, 9u);
  expect_rest_zero(wr);
}

}  // namespace
}  // namespace railscope::net::verbs
