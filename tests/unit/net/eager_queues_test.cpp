// The eager protocol's queue depths (plugin/net/verbs/eager_queues.h): each covers what the protocol
// lets be in flight, fits a power-of-two ring without doubling, and the receiver's control-write
// window never lets more writes into its send queue than it holds.
#include <gtest/gtest.h>

#include <bit>

#include "plugin/net/verbs/eager_queues.h"

namespace railscope::net::verbs::eager {
namespace {

// rxe and mlx5 round a queue of n work requests up to a power of two of at least n + 1 slots.
constexpr bool fills_power_of_two(uint32_t depth) { return std::has_single_bit(depth + 1); }

TEST(NetEagerQueues, DepthsCoverWhatCanBeInFlight) {
  EXPECT_GE(kSenderSendDepth, static_cast<uint32_t>(kRingMessages) + kMaxLargeInFlight + 1);
  EXPECT_GE(kReceiverRecvDepth, static_cast<uint32_t>(kRingMessages) + kMaxLargeInFlight + kRepostBatch - 1);
  EXPECT_GE(kControlDepth, kSignalEvery) << "a full window must hold a signalled write";
  EXPECT_GT(kControlSlots, kControlDepth) << "a staging slot is reused only after its write left the queue";
  EXPECT_GE(kControlSlotBytes, sizeof(ClearToSend));
  EXPECT_GE(kMaxLargeInFlight, static_cast<uint32_t>(NCCL_NET_MAX_REQUESTS)) << "NCCL's requests per comm";
  EXPECT_TRUE(fills_power_of_two(kSenderSendDepth));
  EXPECT_TRUE(fills_power_of_two(kReceiverRecvDepth));
  EXPECT_TRUE(fills_power_of_two(kControlDepth));
}

TEST(NetEagerQueues, CompletionQueueHoldsEveryWorkRequestOfItsQps) {
  const auto per_qp = static_cast<int>(std::max(kSenderSendDepth, kControlDepth) + kReceiverRecvDepth);
  EXPECT_EQ(cq_depth(1), per_qp);
  EXPECT_EQ(cq_depth(4), 4 * per_qp);
  EXPECT_EQ(cq_depth(0), per_qp) << "a lane has at least one QP";
  EXPECT_TRUE(fills_power_of_two(static_cast<uint32_t>(cq_depth(1)) + 1)) << "255 entries: 256 slots";
}

TEST(NetEagerQueues, ControlWindowSignalsOneInSixteenAndRetiresEverythingBefore) {
  ControlWindow w(kControlDepth);
  uint64_t signalled = 0;
  for (uint32_t i = 0; i < kControlDepth; ++i) {
    ASSERT_TRUE(w.has_room()) << i;
    const uint64_t seq = w.next();
    signalled += ControlWindow::signalled(seq);
    w.posted(seq);
  }
  EXPECT_FALSE(w.has_room()) << "full at " << kControlDepth << " outstanding";
  EXPECT_EQ(signalled, kControlDepth / kSignalEvery);
  EXPECT_FALSE(w.retire(5)) << "write 5 was not signalled: no completion can name it";
  EXPECT_FALSE(w.retire(kControlDepth + kSignalEvery)) << "not posted yet";
  ASSERT_TRUE(w.retire(kSignalEvery));
  EXPECT_EQ(w.outstanding(), kControlDepth - kSignalEvery);
  EXPECT_TRUE(w.has_room());
  ASSERT_TRUE(w.retire(kSignalEvery * (kControlDepth / kSignalEvery)));
  EXPECT_TRUE(w.retire(kSignalEvery)) << "an older completion polled late changes nothing";
  EXPECT_EQ(w.outstanding(), kControlDepth % kSignalEvery);
}

TEST(NetEagerQueues, ControlWindowFullAlwaysHoldsASignalledWrite) {
  // Whatever was retired, a full window holds a signalled write whose completion will free room:
  // the receiver never waits for a completion that cannot come.
  for (uint32_t depth : {kSignalEvery, kControlDepth}) {
    ControlWindow w(depth);
    uint64_t last_signalled = 0;
    for (int round = 0; round < 200; ++round) {
      while (w.has_room()) {
        const uint64_t seq = w.next();
        if (ControlWindow::signalled(seq)) last_signalled = seq;
        w.posted(seq);
      }
      ASSERT_GT(last_signalled, w.next() - 1 - w.outstanding()) << "depth " << depth << " round " << round;
      ASSERT_TRUE(w.retire(last_signalled));
    }
  }
}

}  // namespace
}  // namespace railscope::net::verbs::eager
