// SPDX-License-Identifier: Apache-2.0
// The eager protocol's queue depths (plugin/net/verbs/eager/eager_queues.h): each covers what the protocol
// lets be in flight, fits a power-of-two ring without doubling, and the receiver's control-write
// window never lets more writes into its send queue than it holds.
#include <gtest/gtest.h>

#include <bit>
#include <optional>
#include <vector>

#include "plugin/net/verbs/eager/eager_queues.h"

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

TEST(NetEagerQueues, EntriesAheadShareAWriteOnlyWhereBothEndsAdjoin) {
  EXPECT_TRUE(ahead_adjoins(3, 10, 4, 11));
  EXPECT_FALSE(ahead_adjoins(3, 10, 5, 11)) << "an entry held between them";
  EXPECT_FALSE(ahead_adjoins(3, 10, 4, 12)) << "another control write staged between them";
  EXPECT_FALSE(ahead_adjoins(kAheadEntries - 1, 10, 0, 11)) << "the entries wrap";
  EXPECT_FALSE(ahead_adjoins(3, kControlSlots - 1, 4, kControlSlots)) << "the staging slots wrap";
  EXPECT_TRUE(ahead_adjoins(3, kControlSlots, 4, kControlSlots + 1));

  // Grouped receives of up to eight entries, with entries given back in another order and credit
  // writes between the groups, as the receiver does: every write that ahead_adjoins forms is one
  // contiguous run of staging slots here and of entries in the sender's region.
  AheadEntries entries;
  ControlWindow window;
  std::vector<uint32_t> held;
  uint64_t state = 12345;
  auto next_random = [&] { return (state = state * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; };
  int writes = 0, entries_written = 0;
  for (int group = 0; group < 2000; ++group) {
    while (held.size() > 16) {  // sends take entries, not in the order they were written
      const size_t k = next_random() % held.size();
      entries.give_back(held[k]);
      held.erase(held.begin() + static_cast<std::ptrdiff_t>(k));
    }
    for (uint64_t credits = next_random() % 3; credits > 0; --credits) window.posted(window.next());
    uint64_t first_slot = 0, first_entry = 0, bytes = 0;
    uint32_t last_entry = 0;
    uint64_t last_seq = 0;
    const uint64_t n = 1 + next_random() % 8;
    for (uint64_t i = 0; i < n; ++i) {
      const std::optional<uint32_t> e = entries.take();
      ASSERT_TRUE(e.has_value());
      held.push_back(*e);
      const uint64_t seq = window.next();
      window.posted(seq);
      ++entries_written;
      if (i > 0 && ahead_adjoins(last_entry, last_seq, *e, seq)) {
        EXPECT_EQ((seq % kControlSlots) * kControlSlotBytes, first_slot + bytes) << "group " << group;
        EXPECT_EQ(*e * sizeof(ClearToSend), first_entry + bytes) << "group " << group;
      } else {
        ++writes;
        first_slot = (seq % kControlSlots) * kControlSlotBytes;
        first_entry = *e * sizeof(ClearToSend);
        bytes = 0;
      }
      bytes += sizeof(ClearToSend);
      last_entry = *e;
      last_seq = seq;
    }
    while (window.outstanding() > kControlDepth / 2)
      window.retire(window.next() - 1 - (window.next() - 1) % kSignalEvery);
  }
  // Taken in turn, most of a group's entries share its write.
  EXPECT_LT(writes * 2, entries_written) << writes << " writes for " << entries_written << " entries";
}

}  // namespace
}  // namespace railscope::net::verbs::eager
