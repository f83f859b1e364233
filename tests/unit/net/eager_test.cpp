// The eager protocol's pure parts (plugin/net/verbs/eager.h): wire layouts, ring slot bookkeeping
// when slots are released out of order, and when credits are written back.
#include <gtest/gtest.h>

#include "plugin/net/verbs/eager.h"

namespace railscope::net::verbs::eager {
namespace {

TEST(NetEager, SlotStrideHoldsHeaderAndPayloadOnCacheLines) {
  EXPECT_EQ(slot_stride(0), 64u);
  EXPECT_EQ(slot_stride(32), 64u);
  EXPECT_EQ(slot_stride(33), 128u);
  EXPECT_EQ(slot_stride(4096), 4096u + 64u);
  EXPECT_GE(slot_stride(kMaxEagerBytes), sizeof(Header) + kMaxEagerBytes);
}

TEST(NetEager, ImmediatesTellRingMessagesFromDataParts) {
  EXPECT_EQ(imm_ring(1), 1u);
  EXPECT_EQ(imm_ring(kRingSlots), 0u);
  EXPECT_EQ(imm_ring(kRingSlots + 5), 5u);
  EXPECT_EQ(imm_ring(123) & kImmData, 0u);
  EXPECT_NE(imm_target(0) & kImmData, 0u);
  EXPECT_EQ(imm_target(kMaxTargets - 1) & ~kImmData, kMaxTargets - 1);
}

TEST(NetEager, ReleasedPrefixWaitsForTheOldestHeldSlot) {
  ReleasedPrefix p;
  EXPECT_EQ(p.advance(), 0u);
  p.release(2);
  p.release(3);
  EXPECT_EQ(p.advance(), 0u) << "message 1 is still held";
  p.release(1);
  EXPECT_EQ(p.advance(), 3u);
  // Around the ring several times, released in reverse within each window of 8.
  uint64_t next = 4;
  for (int round = 0; round < 3 * kRingSlots / 8; ++round) {
    for (uint64_t s = next + 7; s >= next; --s) p.release(s);
    next += 8;
    EXPECT_EQ(p.advance(), next - 1);
  }
}

TEST(NetEager, CreditsGoBackInBatchesOrWhenTheSenderMayWait) {
  EXPECT_FALSE(credits_due(0, 0, 0));
  EXPECT_FALSE(credits_due(5, 5, 0)) << "a few released, sender far from the limit";
  EXPECT_FALSE(credits_due(kRingSlots / 2 - 1, kRingSlots / 2 - 1, 0));
  EXPECT_TRUE(credits_due(kRingSlots / 2, kRingSlots / 2, 0));
  EXPECT_TRUE(credits_due(1, kRingSlots, 0)) << "sender out of credits: any release is news";
  EXPECT_FALSE(credits_due(10, kRingSlots, 10)) << "nothing new to say";
  EXPECT_TRUE(credits_due(11, 10 + kRingSlots * 3 / 4, 10));
  EXPECT_FALSE(credits_due(11, 10 + kRingSlots * 3 / 4 - 1, 10));
}

}  // namespace
}  // namespace railscope::net::verbs::eager
