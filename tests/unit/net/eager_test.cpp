// The eager protocol's pure parts (plugin/net/verbs/eager.h): wire layouts, ring slot bookkeeping
// when slots are released out of order, and when credits are written back.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

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

// Closing a sender (eager.h close_verdict). The false alarm of issue 20: a healthy receiver that
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
  void write(uint64_t seq, const Header& h) {
    std::memcpy(bytes.data() + slot_offset(seq, max), &h, sizeof h);
  }
  std::span<const std::byte> span() const { return bytes; }
  uint32_t max;
  std::vector<std::byte> bytes;
};

TEST(NetEager, AHeaderIsCopiedOnceAndTheRingCannotChangeTheCopy) {
  Ring ring(4096);
  const uint64_t seq = kRingSlots + 3;  // second time round the ring
  ring.write(seq, Header{seq, 100, 7, kData, 12, 0});
  std::string why;
  const auto h = take_header(ring.span(), seq, ring.max, &why);
  ASSERT_TRUE(h) << why;
  // The peer rewrites the header while the message is held: size 1 MiB, another kind and request.
  ring.write(seq, Header{seq, 1u << 20, 7, kRequestToSend, 99999, 0});
  EXPECT_EQ(h->size, 100u);
  EXPECT_EQ(h->kind, kData);
  EXPECT_EQ(h->req, 12u);
  const auto p = payload(ring.span(), seq, ring.max, *h);
  EXPECT_EQ(p.size(), 100u);
  EXPECT_EQ(p.data(), ring.span().data() + slot_offset(seq, ring.max) + sizeof(Header));
  // Whatever a header copy says, the payload stays inside its slot.
  const Header lying{seq, 1u << 20, 7, kData, 0, 0};
  EXPECT_LE(payload(ring.span(), seq, ring.max, lying).size(), ring.max);
}

TEST(NetEager, HeadersThePeerMayNotSendAreRefused) {
  Ring ring(4096);
  std::string why;
  auto refused = [&](const Header& h, uint64_t seq) {
    ring.write(seq, h);
    why.clear();
    return !take_header(ring.span(), seq, ring.max, &why) && !why.empty();
  };
  EXPECT_TRUE(refused(Header{2, 10, 1, kData, 0, 0}, 1)) << "sequence number of another message";
  EXPECT_TRUE(refused(Header{1, 10, 1, 3, 0, 0}, 1)) << "unknown kind";
  EXPECT_TRUE(refused(Header{1, 4097, 1, kData, 0, 0}, 1)) << "eager data above the limit";
  EXPECT_TRUE(refused(Header{1, 4096, 1, kRequestToSend, 0, 0}, 1)) << "request-to-send of an eager size";
  EXPECT_TRUE(refused(Header{1, 10, 1, kData, static_cast<uint32_t>(kMaxTargets), 0}, 1)) << "request index";
  EXPECT_FALSE(refused(Header{1, 4096, 1, kData, static_cast<uint32_t>(kMaxTargets) - 1, 0}, 1)) << why;
  EXPECT_FALSE(refused(Header{5, 1u << 20, 1, kRequestToSend, 0, 0}, 5)) << why;
  // A ring smaller than the limit says is refused, not read past.
  const std::vector<std::byte> small(slot_stride(4096));
  EXPECT_FALSE(take_header(small, 1, 4096, &why));
}

}  // namespace
}  // namespace railscope::net::verbs::eager
