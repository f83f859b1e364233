// SPDX-License-Identifier: Apache-2.0
// The eager protocol's pure parts (plugin/net/verbs/eager/eager.h): wire layouts, where messages lie in the
// ring, the sender's credits, messages released out of order, when credits are written back, which
// entries ahead the receiver writes, and a payload's copy.
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <vector>

#include "plugin/net/verbs/eager/eager.h"

namespace railscope::net::verbs::eager {
namespace {

TEST(NetEager, AMessageTakesItsHeaderAndPayloadOnCacheLines) {
  EXPECT_EQ(message_stride(0), 64u) << "a request-to-send";
  EXPECT_EQ(message_stride(32), 64u);
  EXPECT_EQ(message_stride(33), 128u);
  EXPECT_EQ(message_stride(4096), 4096u + 64u);
  EXPECT_EQ(max_stride(4096), message_stride(4096));
  EXPECT_GE(max_stride(kMaxEagerBytes), sizeof(Header) + kMaxEagerBytes);
}

TEST(NetEager, TheRingHoldsFourOfTheLargestMessagesInWholePages) {
  EXPECT_EQ(ring_bytes(0), kMinRingBytes);
  EXPECT_EQ(ring_bytes(4096), 32u * 1024)
      << "the default limit: 32 KiB where 64 slots of 4160 B took 260 KiB";
  for (uint32_t limit : {1u, 4096u, 8000u, 65536u, static_cast<uint32_t>(kMaxEagerBytes)}) {
    EXPECT_GE(ring_bytes(limit), 4 * max_stride(limit)) << limit;
    EXPECT_EQ(ring_bytes(limit) % 4096, 0u) << limit;
  }
}

TEST(NetEager, MessagesFollowEachOtherAndWrapRatherThanCrossTheEnd) {
  constexpr size_t kRing = 4096;
  RingPlace p = place_after(0, 64, kRing);
  EXPECT_EQ(p.start, 0u);
  EXPECT_EQ(p.end, 64u);
  p = place_after(p.end, 4032, kRing);
  EXPECT_EQ(p.offset(kRing), 64u) << "fits exactly up to the end";
  EXPECT_EQ(p.end, kRing);
  p = place_after(p.end, 128, kRing);
  EXPECT_EQ(p.start, kRing) << "the next round starts at offset 0";
  EXPECT_EQ(p.offset(kRing), 0u);
  p = place_after(kRing + 4032, 128, kRing);
  EXPECT_EQ(p.start, 2 * kRing) << "128 bytes do not fit in the last 64: the tail is skipped";
  EXPECT_EQ(p.end, 2 * kRing + 128);
}

TEST(NetEager, ImmediatesTellRingMessagesFromDataParts) {
  constexpr size_t kRing = 32 * 1024;
  EXPECT_EQ(imm_ring(RingPlace{0, 64}, kRing), 0u);
  EXPECT_EQ(imm_ring(RingPlace{kRing + 640, kRing + 704}, kRing), 10u) << "the offset in cache lines";
  EXPECT_EQ(imm_ring(RingPlace{ring_bytes(kMaxEagerBytes) - 64, 0}, ring_bytes(kMaxEagerBytes)) & kImmData,
            0u);
  EXPECT_NE(imm_target(0) & kImmData, 0u);
  EXPECT_EQ(imm_target(kMaxTargets - 1) & ~kImmData, kMaxTargets - 1);
}

TEST(NetEager, TheSenderWaitsForCreditsRingBytesAndItsOwnCompletions) {
  SenderRing ring(ring_bytes(4096));
  const size_t big = message_stride(4096);
  uint64_t posted = 0;
  for (;;) {
    const auto p = ring.reserve(big, posted);  // every write completed here at once
    if (!p) break;
    ring.post(*p);
    ++posted;
  }
  EXPECT_EQ(posted, 7u) << "32 KiB holds seven 4160-byte messages";
  EXPECT_FALSE(ring.credit(ring.end_of(posted) + 1)) << "the receiver cannot release more than was sent";
  ASSERT_TRUE(ring.credit(ring.end_of(1) - 1)) << "part of a message";
  EXPECT_EQ(ring.released(), 0u) << "a message is free only once wholly released";
  EXPECT_FALSE(ring.reserve(big, posted));
  ASSERT_TRUE(ring.credit(ring.end_of(1)));
  EXPECT_EQ(ring.released(), 1u);
  const auto wrapped = ring.reserve(big, posted);
  ASSERT_TRUE(wrapped) << "the eighth wraps to offset 0, behind the released first";
  EXPECT_EQ(wrapped->offset(ring.size()), 0u);
  EXPECT_FALSE(ring.reserve(big, 0)) << "nor may it overwrite staging whose write has not completed";
  ring.post(*wrapped);

  // Small messages: the credits (messages in flight) bound them before the bytes do.
  SenderRing small(ring_bytes(4096));
  for (int i = 0; i < kRingMessages; ++i) {
    const auto p = small.reserve(message_stride(8), static_cast<uint64_t>(i));
    ASSERT_TRUE(p) << i;
    small.post(*p);
  }
  EXPECT_FALSE(small.reserve(message_stride(8), kRingMessages)) << "64 messages unreleased";
  ASSERT_TRUE(small.credit(small.end_of(kRingMessages)));
  EXPECT_EQ(small.released(), static_cast<uint64_t>(kRingMessages));
  EXPECT_FALSE(small.reserve(message_stride(8), 0)) << "64 not completed here";
  EXPECT_TRUE(small.reserve(message_stride(8), kRingMessages));
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
  for (int round = 0; round < 3 * kRingMessages / 8; ++round) {
    for (uint64_t s = next + 7; s >= next; --s) p.release(s);
    next += 8;
    EXPECT_EQ(p.advance(), next - 1);
  }
}

// The loopback hang of this change's first version: seven 4 KiB messages filled the ring before the
// 16th write (the only signalled one) was posted, so no completion could ever free the staging bytes.
TEST(NetEager, ASenderOutOfRoomAlwaysWaitsForASignalledWrite) {
  for (uint32_t limit : {4096u, 8000u, 65536u}) {
    SenderRing ring(ring_bytes(limit));
    uint64_t retired = 0, signalled = 0;
    uint32_t x = 12345;
    for (int i = 0; i < 5000; ++i) {
      x = x * 1103515245u + 12345u;
      const size_t sizes[] = {0, 8, 100, 1000, limit / 2, limit};
      const size_t stride = message_stride(sizes[(x >> 16) % 6]);
      ASSERT_TRUE(ring.credit(ring.end_of(ring.posted())));  // the receiver released everything
      auto p = ring.reserve(stride, retired);
      if (!p) {
        ASSERT_GT(signalled, retired)
            << "out of room with no signalled write to wait for, limit " << limit << ", message " << i;
        retired = signalled;  // its completion arrives, and retires every write before it
        p = ring.reserve(stride, retired);
        ASSERT_TRUE(p) << "limit " << limit << ", message " << i;
      }
      const uint64_t seq = ring.posted() + 1;
      if (ring_write_signalled(seq, *p, ring.end_of(ring.posted()), ring.size())) signalled = seq;
      ring.post(*p);
    }
  }
}

TEST(NetEager, CreditsGoBackInBatchesOrWhenTheSenderMayWait) {
  constexpr size_t kRing = 32 * 1024;
  auto due = [](uint64_t released, uint64_t arrived, uint64_t returned, uint64_t bytes_each = 64) {
    return credits_due(RingCount{released, released * bytes_each}, RingCount{arrived, arrived * bytes_each},
                       RingCount{returned, returned * bytes_each}, kRing);
  };
  EXPECT_FALSE(due(0, 0, 0));
  EXPECT_FALSE(due(5, 5, 0)) << "a few released, sender far from the limit";
  EXPECT_FALSE(due(kRingMessages / 2 - 1, kRingMessages / 2 - 1, 0));
  EXPECT_TRUE(due(kRingMessages / 2, kRingMessages / 2, 0));
  EXPECT_TRUE(due(1, kRingMessages, 0)) << "sender out of credits: any release is news";
  EXPECT_FALSE(due(10, kRingMessages, 10)) << "nothing new to say";
  EXPECT_TRUE(due(11, 10 + kRingMessages * 3 / 4, 10));
  EXPECT_FALSE(due(11, 10 + kRingMessages * 3 / 4 - 1, 10));
  // 4 KiB messages: seven fill the ring, so bytes decide long before 48 messages are unreturned.
  const uint64_t big = message_stride(4096);
  EXPECT_FALSE(due(1, 3, 0, big)) << "a quarter of the ring";
  EXPECT_TRUE(due(1, 4, 0, big)) << "half the ring has arrived unreturned: the sender may soon wait";
  EXPECT_FALSE(due(4, 4, 4, big));
}

// Closing a sender (eager.h close_verdict). The false alarm to avoid: a healthy receiver that
// closed first and took every message, before the sender's zero-byte write was acknowledged and with
// its last credits not yet written back; the old close warned unless an RDMA acknowledgement came.
TEST(NetEager, CloseIsSettledByAckCreditsOrTheReceiversWord) {
  CloseFacts f;
  EXPECT_EQ(close_verdict(f).kind, CloseVerdict::kSettled) << "nothing sent";
  f.posted = 100;
  f.acked = 96;
  f.credits = 89;
  EXPECT_EQ(close_verdict(f).kind, CloseVerdict::kWait);
  EXPECT_EQ(close_verdict(f).missing, 4u);
  f.acked = 100;
  EXPECT_EQ(close_verdict(f).kind, CloseVerdict::kSettled) << "every write acknowledged";
  f.acked = 96;
  f.credits = 100;
  EXPECT_EQ(close_verdict(f).kind, CloseVerdict::kSettled) << "every message released";
  f.credits = 89;
  f.taken = 100;
  EXPECT_EQ(close_verdict(f).kind, CloseVerdict::kSettled) << "the receiver said it took all";
  f.peer_gone = true;
  EXPECT_EQ(close_verdict(f).kind, CloseVerdict::kSettled) << "and then closed its socket: still settled";
}

TEST(NetEager, CloseWarnsOnlyWhenNoMoreNewsCanCome) {
  CloseFacts f;
  f.posted = 100;
  f.acked = 96;
  f.credits = 89;
  f.peer_gone = true;  // socket closed without a CLOSING message: a receiver that died or failed
  CloseVerdict v = close_verdict(f);
  EXPECT_EQ(v.kind, CloseVerdict::kLost);
  EXPECT_EQ(v.missing, 4u);
  EXPECT_FALSE(v.receiver_said);
  f.peer_gone = false;
  f.taken = 90;  // closed having taken 90 of 100: the rest never reached a receive
  v = close_verdict(f);
  EXPECT_EQ(v.kind, CloseVerdict::kLost);
  EXPECT_TRUE(v.receiver_said);
  EXPECT_EQ(v.missing, 4u) << "acknowledged writes still count as arrived";
  f.taken = 101;  // more than was posted: not believed
  v = close_verdict(f);
  EXPECT_EQ(v.kind, CloseVerdict::kWait);
  EXPECT_FALSE(v.receiver_said);
  f.peer_gone = true;
  EXPECT_EQ(close_verdict(f).kind, CloseVerdict::kLost);
  f.credits = 200;  // a credit word beyond what was posted settles nothing beyond the posted count
  EXPECT_EQ(close_verdict(f).missing, 0u);
}

// A ring as the receiver registered it, written as the peer would.
struct Ring {
  explicit Ring(uint32_t eager_max) : max(eager_max), bytes(ring_bytes(eager_max)) {}
  void write(size_t offset, const Header& h) { std::memcpy(bytes.data() + offset, &h, sizeof h); }
  std::span<const std::byte> span() const { return bytes; }
  uint32_t max;
  std::vector<std::byte> bytes;
};

TEST(NetEager, EntriesAheadAreTakenInTurnAndOnlyWhenFree) {
  AheadEntries e;
  // In turn from 0, each entry after the last taken: a sender that looks from the entry after the one
  // it used last finds each at its first look.
  for (uint32_t i = 0; i < 5; ++i) EXPECT_EQ(e.take(), std::optional<uint32_t>(i));
  e.give_back(0);
  e.give_back(1);
  EXPECT_EQ(e.take(), std::optional<uint32_t>(5)) << "not back to the lowest free entry";
  // A grouped receive's entries are taken in turn too, around the end of the entries.
  for (uint32_t i = 6; i < kAheadEntries; ++i) EXPECT_EQ(e.take(), std::optional<uint32_t>(i));
  EXPECT_EQ(e.take(), std::optional<uint32_t>(0)) << "wraps to the first free one";
  EXPECT_EQ(e.take(), std::optional<uint32_t>(1));
  EXPECT_EQ(e.take(), std::nullopt) << "every entry holds a clear-to-send not yet taken";
  // An entry held while all others come and go is skipped, never rewritten.
  for (uint32_t i = 0; i < kAheadEntries; ++i)
    if (i != 3) e.give_back(i);
  for (int round = 0; round < 100; ++round) {
    const std::optional<uint32_t> got = e.take();
    ASSERT_TRUE(got.has_value());
    EXPECT_NE(*got, 3u) << "round " << round;
    e.give_back(*got);
  }
  e.give_back(3);
  std::vector<bool> seen(kAheadEntries, false);
  for (uint32_t i = 0; i < kAheadEntries; ++i) {
    const std::optional<uint32_t> got = e.take();
    ASSERT_TRUE(got.has_value());
    EXPECT_FALSE(seen[*got]) << *got << " taken twice";
    seen[*got] = true;
  }
  EXPECT_EQ(e.take(), std::nullopt);
}

TEST(NetEager, APayloadCopyMovesExactlyItsBytesAtEverySmallSize) {
  // Up to 16 bytes the copy is inline, by overlapping moves; above, memcpy. Each size from 0 to 40,
  // at every alignment of both ends within a word: the n bytes arrive, nothing around them moves.
  for (size_t n = 0; n <= 40; ++n)
    for (size_t from = 0; from < 8; ++from)
      for (size_t to = 0; to < 8; ++to) {
        std::vector<std::byte> src(64), dst(64, std::byte{0xee});
        for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::byte>(i + 1);
        copy_payload(dst.data() + to, src.data() + from, n);
        for (size_t i = 0; i < dst.size(); ++i) {
          const bool inside = i >= to && i < to + n;
          ASSERT_EQ(dst[i], inside ? src[from + i - to] : std::byte{0xee})
              << n << " bytes from offset " << from << " to offset " << to << ", byte " << i;
        }
      }
}

TEST(NetEager, AHeaderIsCopiedOnceAndTheRingCannotChangeTheCopy) {
  Ring ring(4096);
  const uint64_t seq = 300;
  const uint64_t previous_end = ring.bytes.size() + 128;  // second time round the ring
  ring.write(128, Header{seq, 100, 7, kData, 0, 1});
  std::string why;
  RingPlace place;
  const auto h = take_header(ring.span(), seq, previous_end, 2, ring.max, &place, &why);
  ASSERT_TRUE(h) << why;
  EXPECT_EQ(place.start, previous_end);
  EXPECT_EQ(place.end, previous_end + message_stride(100));
  // The peer rewrites the header while the message is held: size 1 MiB, another kind and request.
  ring.write(128, Header{seq, 1u << 20, 7, kRequestToSend, 99999, 1});
  EXPECT_EQ(h->size, 100u);
  EXPECT_EQ(h->kind, kData);
  EXPECT_EQ(h->req, 0u);
  const auto p = payload(ring.span(), place, ring.max, *h);
  EXPECT_EQ(p.size(), 100u);
  EXPECT_EQ(p.data(), ring.span().data() + 128 + sizeof(Header));
  // Whatever a header copy says, the payload stays inside the ring and the limit.
  const Header lying{seq, 1u << 20, 7, kData, 0, 0};
  EXPECT_LE(payload(ring.span(), place, ring.max, lying).size(), ring.max);
  const RingPlace at_end{ring.bytes.size() - 64, ring.bytes.size()};
  EXPECT_LE(payload(ring.span(), at_end, ring.max, *h).size(), 32u);
}

TEST(NetEager, HeadersThePeerMayNotSendAreRefused) {
  Ring ring(4096);
  const size_t size = ring.bytes.size();
  std::string why;
  RingPlace place;
  auto refused = [&](const Header& h, uint64_t seq, uint64_t previous_end, uint32_t imm) {
    ring.write(static_cast<size_t>(imm) * 64 % size, h);
    why.clear();
    return !take_header(ring.span(), seq, previous_end, imm, ring.max, &place, &why) && !why.empty();
  };
  EXPECT_TRUE(refused(Header{2, 10, 1, kData, 0, 1}, 1, 0, 0)) << "sequence number of another message";
  EXPECT_TRUE(refused(Header{1, 10, 1, 3, 0, 1}, 1, 0, 0)) << "unknown kind";
  EXPECT_TRUE(refused(Header{1, 10, 1, kData, 0, 0}, 1, 0, 0)) << "no ordinal (sends of a tag count from 1)";
  EXPECT_TRUE(refused(Header{1, 4097, 1, kData, 0, 1}, 1, 0, 0)) << "eager data above the limit";
  EXPECT_TRUE(refused(Header{1, 4096, 1, kRequestToSend, 0, 1}, 1, 0, 0))
      << "request-to-send of an eager size";
  EXPECT_TRUE(
      refused(Header{1, 1u << 20, 1, kRequestToSend, static_cast<uint32_t>(kMailboxEntries), 1}, 1, 0, 0))
      << "mailbox entry";
  EXPECT_FALSE(
      refused(Header{1, 1u << 20, 1, kRequestToSend, static_cast<uint32_t>(kMailboxEntries) - 1, 1}, 1, 0, 0))
      << why;
  EXPECT_FALSE(refused(Header{1, 4096, 1, kData, 0, 1}, 1, 0, 0)) << why;
  // Where it lies: right after the previous message, or at offset 0 when it would cross the end.
  EXPECT_TRUE(refused(Header{5, 10, 1, kData, 0, 1}, 5, 640, 11)) << "not where the previous one ended";
  EXPECT_TRUE(refused(Header{5, 10, 1, kData, 0, 1}, 5, 640, 0)) << "a wrap that was not needed";
  EXPECT_FALSE(refused(Header{5, 10, 1, kData, 0, 1}, 5, 640, 10)) << why;
  EXPECT_FALSE(refused(Header{6, 100, 1, kData, 0, 1}, 6, size - 64, 0)) << "128 bytes wrap: " << why;
  EXPECT_EQ(place.start, size);
  EXPECT_TRUE(refused(Header{6, 100, 1, kData, 0, 1}, 6, size - 64, static_cast<uint32_t>(size / 64 - 1)))
      << "128 bytes across the ring's end";
  EXPECT_FALSE(refused(Header{6, 10, 1, kData, 0, 1}, 6, size - 64, static_cast<uint32_t>(size / 64 - 1)))
      << "64 bytes fit in the last line: " << why;
  EXPECT_TRUE(refused(Header{1, 10, 1, kData, 0, 1}, 1, 0, static_cast<uint32_t>(size / 64)))
      << "an offset beyond the ring";
  // A ring of another size than the limit says is refused, not read past.
  const std::vector<std::byte> small(max_stride(4096));
  EXPECT_FALSE(take_header(small, 1, 0, 0, 4096, &place, &why));
}

}  // namespace
}  // namespace railscope::net::verbs::eager
