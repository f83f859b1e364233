// SPDX-License-Identifier: Apache-2.0
// The work requests a matched clear-to-send slot posts on one QP
// (plugin/net/verbs/receiver_driven/receiver_driven_writes.h): built into arrays that are not initialised
// (ReceiverDrivenSend::post no longer zeroes ~1.3 KiB per QP), so every work request returned must be written
// whole, the chain well formed, each part where chunk_of puts it, the immediate right, only the last
// signalled, and as many as work_requests_on_qp counts.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <vector>

#include "plugin/net/verbs/receiver_driven/receiver_driven.h"
#include "plugin/net/verbs/receiver_driven/receiver_driven_writes.h"
#include "tests/unit/net/send_wr_checks.h"

namespace railscope::net::verbs {
namespace {

constexpr uint8_t kGarbage = 0xa5;
constexpr uint32_t kMaxInline = 64;
constexpr uint64_t kWrId = kWrSend | 17;

struct Fixture {
  std::array<ibv_mr, 2> mrs{};
  VerbsMr mr;
  std::vector<SendReq> reqs;
  std::vector<SendReq*> ptrs;
  std::vector<CtsTarget> cts;
  explicit Fixture(const std::vector<size_t>& sizes) : reqs(sizes.size()) {
    mrs[0].lkey = 0x100;
    mrs[1].lkey = 0x200;
    mr.ndevs = 2;
    mr.mr[0] = &mrs[0];
    mr.mr[1] = &mrs[1];
    for (size_t i = 0; i < sizes.size(); ++i) {
      reqs[i].start(nullptr, reinterpret_cast<void*>(0x1000000 * (i + 1)), sizes[i], &mr);
      ptrs.push_back(&reqs[i]);
      CtsTarget t;
      t.addr = 0xa0000000 + 0x10000000 * i;
      t.size = sizes[i];
      for (int d = 0; d < kMaxDevsPerEnd; ++d) t.rkey[d] = static_cast<uint32_t>(0x1000 * (i + 1) + d);
      cts.push_back(t);
    }
  }
};

// Checks one QP's chain against what the protocol asks (receiver_driven.h) and returns its length.
int check_qp(const Fixture& f, size_t q, size_t nqps, const std::string& at) {
  const QpLane ql{nullptr, static_cast<int>(q % 2), static_cast<int>((q + 1) % 2), kMaxInline};
  const auto lane = static_cast<size_t>(ql.lane);
  const auto rd = static_cast<size_t>(ql.remote_dev);
  SizesWrite sizes{};
  sizes.in_area = receiver_driven::needs_sizes_record(f.reqs.size(), f.reqs[0].size);
  if (sizes.in_area) {
    sizes.local = 0x7000;
    sizes.bytes = static_cast<uint32_t>(4 * f.reqs.size());
    sizes.lkey = 0x77 + static_cast<uint32_t>(lane);
    sizes.area = 0xc0000000;
    sizes.remote = 0xc0000000 + 3 * sizeof(SizesSlot);
    sizes.area_rkey = 0x88 + static_cast<uint32_t>(rd);
  }
  ibv_send_wr wrs[kMaxRecvs + 1];
  ibv_sge sges[kMaxRecvs + 1];
  std::memset(static_cast<void*>(wrs), kGarbage, sizeof wrs);
  std::memset(static_cast<void*>(sges), kGarbage, sizeof sges);
  const int n = qp_writes(f.ptrs, f.cts, ql, q, nqps, sizes, kWrId, wrs, sges);

  std::vector<size_t> sizes_of;
  for (const auto& r : f.reqs) sizes_of.push_back(r.size);
  EXPECT_EQ(static_cast<uint32_t>(n), work_requests_on_qp(sizes_of, q, nqps)) << at;
  EXPECT_LE(static_cast<uint32_t>(n),
            receiver_driven::slot_work_requests(static_cast<uint32_t>(f.reqs.size()), sizes.in_area))
      << at;
  if (n < 1) return n;
  int k = 0;
  for (size_t i = 0; i < f.reqs.size(); ++i) {  // the data writes, in the buffers' order
    size_t off = 0, len = 0;
    chunk_of(f.reqs[i].size, q, nqps, &off, &len);
    if (len == 0) continue;
    const ibv_send_wr& w = wrs[k];
    const std::string here = at + " data write " + std::to_string(k);
    EXPECT_EQ(w.sg_list, &sges[k]) << here;
    EXPECT_EQ(w.num_sge, 1) << here;
    EXPECT_EQ(sges[k].addr, 0x1000000 * (i + 1) + off) << here;
    EXPECT_EQ(sges[k].length, len) << here;
    EXPECT_EQ(sges[k].lkey, f.mrs[lane].lkey) << here;
    EXPECT_EQ(w.wr.rdma.remote_addr, f.cts[i].addr + off) << here;
    EXPECT_EQ(w.wr.rdma.rkey, f.cts[i].rkey[rd]) << here;
    EXPECT_EQ((w.send_flags & IBV_SEND_INLINE) != 0, len <= kMaxInline) << here;
    ++k;
  }
  const ibv_send_wr& last = wrs[n - 1];
  if (k == n) {  // the one data write carries the immediate
    EXPECT_EQ(n, 1) << at;
    EXPECT_FALSE(sizes.in_area) << at;
  } else {
    EXPECT_EQ(k + 1, n) << at << ": one write with immediate after the data writes";
    if (sizes.in_area && q == 0) {
      EXPECT_EQ(last.sg_list, &sges[n - 1]) << at;
      EXPECT_EQ(last.num_sge, 1) << at;
      EXPECT_EQ(sges[n - 1].addr, sizes.local) << at;
      EXPECT_EQ(sges[n - 1].length, sizes.bytes) << at;
      EXPECT_EQ(sges[n - 1].lkey, sizes.lkey) << at;
      EXPECT_EQ(last.wr.rdma.remote_addr, sizes.remote) << at;
      EXPECT_EQ(last.wr.rdma.rkey, sizes.area_rkey) << at;
      EXPECT_EQ((last.send_flags & IBV_SEND_INLINE) != 0, sizes.bytes <= kMaxInline) << at;
    } else {
      EXPECT_EQ(last.sg_list, nullptr) << at;
      EXPECT_EQ(last.num_sge, 0) << at;
      EXPECT_EQ(last.wr.rdma.remote_addr, sizes.in_area ? sizes.area : f.cts[0].addr) << at;
      EXPECT_EQ(last.wr.rdma.rkey, sizes.in_area ? sizes.area_rkey : f.cts[0].rkey[rd]) << at;
      EXPECT_EQ(last.send_flags & IBV_SEND_INLINE, 0u) << at;
    }
  }
  EXPECT_EQ(last.imm_data, htonl(sizes.in_area ? kSizesInArea : static_cast<uint32_t>(f.reqs[0].size))) << at;
  for (int j = 0; j < n; ++j) {
    const ibv_send_wr& w = wrs[j];
    const std::string here = at + " work request " + std::to_string(j);
    const bool is_last = j == n - 1;
    EXPECT_EQ(w.next, is_last ? nullptr : &wrs[j + 1]) << here;
    EXPECT_EQ(w.opcode, is_last ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE) << here;
    EXPECT_EQ((w.send_flags & IBV_SEND_SIGNALED) != 0, is_last) << here;
    EXPECT_EQ(w.send_flags & ~static_cast<unsigned>(IBV_SEND_SIGNALED | IBV_SEND_INLINE), 0u) << here;
    EXPECT_EQ(w.wr_id, is_last ? kWrId : 0u) << here;
    if (!is_last) {
      EXPECT_EQ(w.imm_data, 0u) << here;
    }
    expect_rest_zero(w, here);
  }
  // Nothing beyond the chain is written.
  const auto* beyond = reinterpret_cast<const uint8_t*>(&wrs[n]);
  for (size_t b = 0; b < sizeof(ibv_send_wr) * static_cast<size_t>(kMaxRecvs + 1 - n); ++b)
    if (beyond[b] != kGarbage) {
      ADD_FAILURE() << at << ": byte " << b << " past the chain written";
      break;
    }
  return n;
}

TEST(NetReceiverDrivenWrites, EveryWorkRequestPostedIsWrittenWholeAndWhereChunkOfPutsIt) {
  // Up to beyond what the immediate holds (a sizes record then); the engine offers NCCL 1 GiB messages at
  // most (verbs_engine.cpp), so no part exceeds a scatter-gather entry's 32-bit length.
  const std::vector<size_t> sizes = {
      0, 1, 64, 65, 128, 129, 4096, 65536, size_t{1} << 31, (size_t{1} << 31) + 5};
  for (size_t nqps = 1; nqps <= 4; ++nqps)
    for (size_t nreqs = 1; nreqs <= kMaxRecvs; ++nreqs)
      for (size_t first : sizes)
        for (size_t rest : sizes) {
          if (nreqs == 1 && rest != sizes[0]) continue;
          std::vector<size_t> slot(nreqs, rest);
          slot[0] = first;
          const Fixture f(slot);
          for (size_t q = 0; q < nqps; ++q) {
            const std::string at = std::to_string(nreqs) + " buffers (first " + std::to_string(first) +
                                   ", rest " + std::to_string(rest) + "), QP " + std::to_string(q) + "/" +
                                   std::to_string(nqps);
            ASSERT_GE(check_qp(f, q, nqps, at), 1) << at << ": every QP ends its part with an immediate";
            if (HasFailure()) return;
          }
        }
}

TEST(NetReceiverDrivenWrites, OneSmallBufferIsOneSignalledInlineWriteWithImmediate) {
  const Fixture f({8});
  const QpLane ql{nullptr, 0, 0, kMaxInline};
  ibv_send_wr wrs[kMaxRecvs + 1];
  ibv_sge sges[kMaxRecvs + 1];
  std::memset(static_cast<void*>(wrs), kGarbage, sizeof wrs);
  ASSERT_EQ(qp_writes(f.ptrs, f.cts, ql, 0, 1, SizesWrite{}, kWrId, wrs, sges), 1);
  EXPECT_EQ(wrs[0].opcode, IBV_WR_RDMA_WRITE_WITH_IMM);
  EXPECT_EQ(wrs[0].send_flags, static_cast<unsigned>(IBV_SEND_SIGNALED | IBV_SEND_INLINE));
  EXPECT_EQ(wrs[0].imm_data, htonl(8));
  EXPECT_EQ(wrs[0].next, nullptr);
  EXPECT_EQ(wrs[0].wr_id, kWrId);
}

}  // namespace
}  // namespace railscope::net::verbs
