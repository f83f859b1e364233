// SPDX-License-Identifier: Apache-2.0
// The receiver-driven protocol's queue depths (plugin/net/verbs/receiver_driven/receiver_driven_queues.h):
// each covers what the protocol lets be in flight, fits a power-of-two ring without doubling, the sender's
// budget never lets more work requests into a send queue than it holds, and the receiver's clear-to-send
// window always holds a signalled write when full.
#include <gtest/gtest.h>

#include <bit>
#include <vector>

#include "plugin/net/verbs/receiver_driven/receiver_driven.h"

namespace railscope::net::verbs::receiver_driven {
namespace {

// rxe and mlx5 round a queue of n work requests up to a power of two of at least n + 1 slots.
constexpr bool fills_power_of_two(uint32_t depth) { return std::has_single_bit(depth + 1); }

TEST(NetReceiverDrivenQueues, DepthsCoverWhatCanBeInFlight) {
  EXPECT_EQ(kFifoSlots, static_cast<uint32_t>(NCCL_NET_MAX_REQUESTS)) << "NCCL's receives per comm, no more";
  EXPECT_EQ(static_cast<uint32_t>(kCtsSlots), kFifoSlots);
  EXPECT_EQ(kFifoBytes, 16384u) << "32 slots of 8 clear-to-send entries of 64 bytes";
  EXPECT_GE(kReceiverRecvDepth, kFifoSlots) << "one standing receive per QP per receive in flight";
  EXPECT_GE(kSenderSendDepth, slot_work_requests(kMaxBuffersPerSlot, true)) << "a full slot must always fit";
  EXPECT_GE(kCtsDepth, kCtsSignalEvery) << "a full window must hold a signalled write";
  EXPECT_TRUE(fills_power_of_two(kSenderSendDepth));
  EXPECT_TRUE(fills_power_of_two(kSenderRecvDepth));
  EXPECT_TRUE(fills_power_of_two(kReceiverRecvDepth));
  EXPECT_TRUE(fills_power_of_two(kCtsDepth));
}

TEST(NetReceiverDrivenQueues, CompletionQueueHoldsEveryWorkRequestOfItsQps) {
  const auto per_qp =
      static_cast<int>(std::max(kSenderSendDepth + kSenderRecvDepth, kCtsDepth + kReceiverRecvDepth));
  EXPECT_EQ(cq_depth(1), per_qp);
  EXPECT_EQ(cq_depth(4), 4 * per_qp);
  EXPECT_EQ(cq_depth(0), per_qp) << "a lane has at least one QP";
  EXPECT_LE(static_cast<uint32_t>(cq_depth(1)) + 1, 128u) << "one QP per lane: a 128-slot CQ";
}

// What post() puts on one QP never exceeds slot_work_requests: every buffer count, sizes from empty
// to beyond what the immediate holds, 1 to 16 QPs.
TEST(NetReceiverDrivenQueues, SlotWorkRequestsBoundWhatASlotPostsOnEveryQp) {
  const std::vector<size_t> sizes = {
      0, 1, 127, 128, 129, 4096, 65536, 1u << 20, size_t{1} << 31, (size_t{1} << 32) + 5};
  uint32_t most = 0;
  for (size_t nqps = 1; nqps <= static_cast<size_t>(kMaxQpsPerConn); ++nqps)
    for (size_t nreqs = 1; nreqs <= kMaxBuffersPerSlot; ++nreqs)
      for (size_t first : sizes)
        for (size_t rest : sizes) {
          std::vector<size_t> slot(nreqs, rest);
          slot[0] = first;
          for (size_t q = 0; q < nqps; ++q) {
            const uint32_t wrs = work_requests_on_qp(slot, q, nqps);
            ASSERT_GE(wrs, 1u) << "every QP ends its part with an immediate";
            ASSERT_LE(wrs, slot_work_requests(static_cast<uint32_t>(nreqs), needs_sizes_record(nreqs, first)))
                << nreqs << " buffers, first " << first << ", rest " << rest << ", QP " << q << "/" << nqps;
            most = std::max(most, wrs);
          }
        }
  EXPECT_EQ(most, slot_work_requests(kMaxBuffersPerSlot, true)) << "the bound is reached: it is not loose";
  // One buffer: its data write carries the immediate, unless the size needs a sizes record.
  const size_t one[] = {4096}, huge[] = {size_t{1} << 31};
  EXPECT_EQ(work_requests_on_qp(one, 0, 1), 1u);
  EXPECT_EQ(work_requests_on_qp(huge, 0, 1), 2u);
  EXPECT_EQ(slot_work_requests(1, needs_sizes_record(1, 4096)), 1u);
  EXPECT_EQ(slot_work_requests(1, needs_sizes_record(1, size_t{1} << 31)), 2u);
}

TEST(NetReceiverDrivenQueues, SendBudgetTakesWhatNcclKeepsInFlight) {
  // NCCL's 32 requests as single-buffer slots, as two-buffer slots, and as full eight-buffer slots.
  for (uint32_t per_slot : {1u, 2u, 8u}) {
    SendBudget b;
    for (uint32_t taken = 0; taken + per_slot <= static_cast<uint32_t>(NCCL_NET_MAX_REQUESTS);
         taken += per_slot) {
      const uint32_t wrs = slot_work_requests(per_slot, needs_sizes_record(per_slot, 65536));
      ASSERT_TRUE(b.fits(wrs)) << per_slot << " per slot, " << taken << " taken";
      b.posted(wrs);
      ASSERT_LE(b.in_flight(), kSenderSendDepth);
    }
  }
}

TEST(NetReceiverDrivenQueues, SendBudgetNeverExceedsTheSendQueue) {
  SendBudget b;
  const uint32_t full = slot_work_requests(kMaxBuffersPerSlot, true);
  uint32_t slots = 0;
  while (b.fits(full)) {
    b.posted(full);
    ++slots;
  }
  EXPECT_EQ(slots, kSenderSendDepth / full) << "7 full slots of 9";
  EXPECT_LE(b.in_flight(), kSenderSendDepth);
  EXPECT_FALSE(b.fits(full)) << "an eighth full slot waits";
  EXPECT_TRUE(b.fits(kSenderSendDepth - b.in_flight())) << "what is left still fits";
  EXPECT_FALSE(b.fits(kSenderSendDepth - b.in_flight() + 1));
  EXPECT_TRUE(b.retired(full));
  EXPECT_TRUE(b.fits(full)) << "a retired slot frees its work requests";
  SendBudget empty;
  EXPECT_FALSE(empty.retired(1)) << "nothing in flight: a completion out of thin air";
}

TEST(NetReceiverDrivenQueues, CtsWindowSignalsOneInSixteenPerQpAndRetiresInOrder) {
  CtsWindow w;
  uint32_t signalled = 0;
  for (uint32_t i = 0; i < kCtsDepth; ++i) {
    ASSERT_TRUE(w.has_room()) << i;
    signalled += w.next_signalled() ? 1 : 0;
    w.posted();
  }
  EXPECT_FALSE(w.has_room()) << "full at " << kCtsDepth << " outstanding";
  EXPECT_EQ(signalled, kCtsDepth / kCtsSignalEvery);
  ASSERT_TRUE(w.retire());
  EXPECT_EQ(w.outstanding(), kCtsDepth - kCtsSignalEvery) << "the first signalled write and those before";
  EXPECT_TRUE(w.has_room());
  for (uint32_t i = 1; i < kCtsDepth / kCtsSignalEvery; ++i) ASSERT_TRUE(w.retire()) << i;
  EXPECT_EQ(w.outstanding(), kCtsDepth % kCtsSignalEvery);
  EXPECT_FALSE(w.retire()) << "no signalled write outstanding: a completion out of thin air";
}

TEST(NetReceiverDrivenQueues, CtsWindowFullAlwaysHoldsASignalledWrite) {
  // Whatever was retired, a full window holds a signalled write whose completion frees room: an irecv
  // answered "call again" never waits for a completion that cannot come.
  for (uint32_t depth : {kCtsSignalEvery, kCtsDepth}) {
    CtsWindow w(depth);
    for (int round = 0; round < 200; ++round) {
      while (w.has_room()) w.posted();
      const uint64_t before = w.outstanding();
      ASSERT_TRUE(w.retire()) << "depth " << depth << " round " << round;
      ASSERT_LT(w.outstanding(), before);
    }
  }
}

// Failover: the replayed immediate is never one the protocol sends otherwise (a size, or the sizes
// record's flag), and a standing receive's wr_id gives back its slot and QP.
TEST(NetReceiverDrivenQueues, ReplayedImmediateIsNoSizeAndNoRecordFlag) {
  for (uint32_t size : {0u, 1u, 4096u, 0x3fffffffu, 0x40000000u, 0x7fffffffu})
    EXPECT_FALSE(is_replay_imm(size)) << size;
  EXPECT_FALSE(is_replay_imm(kSizesInArea));
  for (uint32_t slot = 0; slot < kFifoSlots; ++slot) {
    EXPECT_TRUE(is_replay_imm(kReplayImm | slot));
    EXPECT_EQ((kReplayImm | slot) & ~kReplayImmMask, slot);
  }
  for (size_t q : {size_t{0}, size_t{1}, size_t{63}, size_t{127}})
    for (size_t slot : {size_t{0}, size_t{31}}) {
      EXPECT_EQ(recv_wr_slot(recv_wr_low(q, slot)), slot);
      EXPECT_EQ(recv_wr_qp(recv_wr_low(q, slot)), q);
      EXPECT_EQ(recv_wr_low(q, slot) & kWrKindMask, 0u);  // the kind's byte stays free
    }
}

}  // namespace
}  // namespace railscope::net::verbs::receiver_driven
