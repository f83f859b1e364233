// SPDX-License-Identifier: Apache-2.0
// The failover notice's wire form and checks, the receiver's part ledger, the sender's replay plan and
// the keep-out policy (plugin/net/verbs/failover/, docs/failover.md).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "plugin/net/verbs/failover/failover_message.h"
#include "plugin/net/verbs/failover/outage_findings.h"
#include "plugin/net/verbs/failover/part_ledger.h"
#include "plugin/net/verbs/failover/port_strikes.h"
#include "plugin/net/verbs/failover/replay_plan.h"
#include "plugin/net/verbs/setup/wire_limits.h"

namespace railscope::net::verbs::failover {
namespace {

static_assert(kMaxBodyBytes <= kMaxMessageBody, "a HELD notice fits a handshake message");

Notice held_notice() {
  Notice n;
  n.kind = Kind::Held;
  n.epoch = 1;
  n.qps = 0b0101;  // QPs 0 and 2 of 4: the first port's
  n.next_seq = 42;
  n.held = {{3, 7, 0b0010}, {9, 8, 0}, {255, 1, 0b1111}};
  return n;
}

TEST(NetFailover, HeldNoticeRoundTripsAndIsCanonical) {
  const Notice n = held_notice();
  const std::vector<std::byte> bytes = encode(n);
  std::string why;
  const auto d = decode(bytes, 4, &why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(*d, n);
  EXPECT_EQ(encode(*d), bytes);
}

TEST(NetFailover, MoveNoticeHasNoHeldPart) {
  Notice n;
  n.kind = Kind::Move;
  n.epoch = 2;
  n.qps = 0b10;
  const auto bytes = encode(n);
  EXPECT_EQ(bytes.size(), 14u);  // version, kind, epoch, QPs
  std::string why;
  const auto d = decode(bytes, 2, &why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(*d, n);
}

// A receiver-driven receiver's answer to RESTORED names the first receive the restored QPs carry.
TEST(NetFailover, RestoredNoticeCarriesTheFirstReceiveOnTheRestoredQps) {
  Notice n;
  n.kind = Kind::Restored;
  n.epoch = 3;
  n.qps = 0b10;
  n.next_seq = 1234;
  const auto bytes = encode(n);
  EXPECT_EQ(bytes.size(), 22u);  // version, kind, epoch, QPs, the receive's seq
  std::string why;
  const auto d = decode(bytes, 2, &why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(*d, n);
  auto cut = bytes;
  cut.pop_back();
  EXPECT_FALSE(decode(cut, 2, &why));
}

// Each refusal names what is wrong; none is accepted whatever the rest says.
TEST(NetFailover, RefusesWhatAConfusedOrHostilePeerSends) {
  auto refused = [](std::vector<std::byte> bytes, size_t nqps, const char* what) {
    std::string why;
    EXPECT_FALSE(decode(bytes, nqps, &why)) << what;
    EXPECT_NE(why.find(what), std::string::npos) << why;
  };
  const auto good = encode(held_notice());
  auto v = good;
  v[0] = std::byte{1};
  refused(v, 4, "version 1");
  v = good;
  v[1] = std::byte{9};
  refused(v, 4, "unknown kind 9");
  v = good;
  v[2] = v[3] = v[4] = v[5] = std::byte{0};
  refused(v, 4, "epoch 0");
  refused(good, 2, "on a connection of 2 QPs");  // QP 2 does not exist
  Notice all = held_notice();
  all.qps = 0b1111;
  refused(encode(all), 4, "QPs 0xf");  // nothing left to move to
  Notice order = held_notice();
  std::swap(order.held[0], order.held[1]);
  refused(encode(order), 4, "target 3 after 9");
  Notice twice = held_notice();
  twice.held[1].target = 3;
  refused(encode(twice), 4, "target 3 after 3");
  Notice parts = held_notice();
  parts.held[0].parts = 0b10000;
  refused(encode(parts), 4, "parts 0x10 of target 3");
  Notice target = held_notice();
  target.held[2].target = 256;
  refused(encode(target), 4, "target 256");
  v = good;
  v.push_back(std::byte{0});
  refused(v, 4, "1 bytes left over");
  v = good;
  v.pop_back();
  refused(v, 4, "truncated");
  v = good;
  v[22] = std::byte{0xff};  // the count of targets, low byte: 0x1ff
  v[23] = std::byte{0x01};
  refused(v, 4, "511 targets, at most 256");
  refused(std::vector<std::byte>(kMaxBodyBytes + 1), 4, "at most");
  refused(good, 0, "cannot fail over");
}

TEST(NetFailover, AHeldNoticeOfEveryTargetFitsAHandshakeMessage) {
  Notice n;
  n.kind = Kind::Held;
  n.epoch = 1;
  n.qps = 1;
  for (uint16_t t = 0; t < kMaxHeld; ++t) n.held.push_back({t, t, ~uint64_t{0} >> 1});
  const auto bytes = encode(n);
  EXPECT_EQ(bytes.size(), kMaxBodyBytes);
  std::string why;
  EXPECT_TRUE(decode(bytes, 64, &why)) << why;
}

TEST(NetFailover, ReplayedImmediateNamesTargetAndPart) {
  const uint32_t imm = replay_immediate(0x80000000u, 200, 37);
  const auto p = replayed_part(imm & ~0x80000000u);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->target, 200);
  EXPECT_EQ(p->part, 37);
  EXPECT_FALSE(replayed_part(200));                         // a first send's immediate
  EXPECT_FALSE(replayed_part(kImmReplayed | 0x00400000u));  // a bit outside the fields
}

TEST(NetFailoverLedger, TakesEachPartOnceAndCompletesWithTheLast) {
  PartLedger l;
  EXPECT_TRUE(l.expect(5, 11, 3));
  EXPECT_FALSE(l.expect(5, 12, 3));  // still awaiting message 11
  EXPECT_EQ(l.arrive(5, 0), Arrival::Taken);
  EXPECT_EQ(l.arrive(5, 0), Arrival::Refused);  // the same part again
  EXPECT_EQ(l.arrive(5, 3), Arrival::Refused);  // a part the message does not have
  EXPECT_EQ(l.arrive(6, 0), Arrival::Refused);  // a message not awaited
  EXPECT_EQ(l.arrive(5, 2), Arrival::Taken);
  ASSERT_EQ(l.held().size(), 1u);
  EXPECT_EQ(l.held()[0], (PartsHeld{5, 11, 0b101}));
  EXPECT_EQ(l.arrive(5, 1), Arrival::Complete);
  EXPECT_FALSE(l.awaited(5));
  EXPECT_EQ(l.arrive(5, 1), Arrival::Refused);  // after completion: never counted twice
  EXPECT_TRUE(l.held().empty());
  EXPECT_FALSE(l.expect(256, 1, 1));
  EXPECT_FALSE(l.expect(1, 1, 0));
  EXPECT_FALSE(l.expect(1, 1, 65));
}

TEST(NetFailoverPlan, SendsAgainEveryPartTheReceiverLacksOnLiveQps) {
  // Four QPs, QPs 0 and 2 (one port) failed; three large messages in flight, every part of them
  // completed at the sender (acknowledged or flushed) before MOVE, so a part not held is on no wire,
  // whichever QP carried it (QP 3's part of message 3 went before an earlier failover moved it).
  const std::vector<InFlight> flight = {{3, 7, 4}, {9, 8, 4}, {20, 5, 4}};
  Notice h = held_notice();
  h.held = {{3, 7, 0b0011}, {9, 8, 0b1010}, {20, 4, 0}};  // target 20 awaits another message: 5 came whole
  const auto r = plan_replays(flight, h, 0b0101, 4);
  const std::vector<Replay> want = {{3, 2, 1}, {3, 3, 3}, {9, 0, 1}, {9, 2, 3}};
  EXPECT_EQ(r, want);
  // A part beyond the connection's QPs is no part of its messages.
  EXPECT_EQ(plan_replays(std::vector<InFlight>{{3, 7, 9}}, h, 0b0101, 4).size(), 2u);
  EXPECT_EQ(ring_qp(0b0101, 4), 1u);
  EXPECT_EQ(ring_qp(0b1111, 4), 4u);
  EXPECT_TRUE(plan_replays(flight, h, 0b1111, 4).empty());
  // The same message twice in the sender's list is planned once (found by the fuzzer).
  const std::vector<InFlight> twice = {{9, 8, 4}, {9, 8, 4}};
  EXPECT_EQ(plan_replays(twice, h, 0b0101, 4).size(), 2u);
}

TEST(NetFailoverStrikes, APortThatKeepsFailingIsKeptOut) {
  using namespace std::chrono_literals;
  PortStrikes s(3, 1s);
  const auto t0 = PortStrikes::Clock::time_point{} + 100s;
  EXPECT_TRUE(s.in_use());
  EXPECT_FALSE(s.failed(t0));
  EXPECT_FALSE(s.may_probe(t0 + 500ms));
  EXPECT_TRUE(s.may_probe(t0 + 1s));
  s.restored();
  EXPECT_TRUE(s.in_use());
  EXPECT_FALSE(s.failed(t0 + 10s));
  EXPECT_FALSE(s.may_probe(t0 + 11s));  // the backoff doubled
  EXPECT_TRUE(s.may_probe(t0 + 12s));
  s.restored();
  EXPECT_TRUE(s.failed(t0 + 20s));  // the third failure
  EXPECT_TRUE(s.kept_out());
  EXPECT_FALSE(s.may_probe(t0 + 1000s));
  EXPECT_EQ(s.failures(), 3);
}

// Many connections over one port: one link.failover and one link.recovered at WARN per outage.
TEST(NetFailoverFindings, OneWarningPerPortAndOutage) {
  using namespace std::chrono_literals;
  OutageFindings f;
  const auto down = OutageFindings::Clock::time_point{} + 100s;
  EXPECT_FALSE(f.first_recovery());                     // nothing was said to have failed
  EXPECT_TRUE(f.first_failover(down + 2s, down));       // the first connection past its budget
  EXPECT_FALSE(f.first_failover(down + 2500ms, down));  // the others of the same outage
  EXPECT_FALSE(f.first_failover(down + 4s, down));
  EXPECT_TRUE(f.first_recovery());
  EXPECT_FALSE(f.first_recovery());
  // The port goes down again: a new outage, and its recovery is news again.
  const auto again = down + 20s;
  EXPECT_TRUE(f.first_failover(again + 2s, again));
  EXPECT_FALSE(f.first_failover(again + 3s, again));
  EXPECT_TRUE(f.first_recovery());
}

// The port watcher and the connections say link.recovered of one outage once at WARN between them.
TEST(NetFailoverFindings, OneRecoveryWarningBetweenThePortAndItsConnections) {
  using namespace std::chrono_literals;
  OutageFindings f;
  const auto down = OutageFindings::Clock::time_point{} + 100s;
  // A flap the retransmissions rode out: no connection moved, the watcher's line is the warning.
  f.link_went_down();
  EXPECT_TRUE(f.port_recovery());
  EXPECT_FALSE(f.first_recovery());
  // An outage that moved traffic, its link event read after the failover; a connection is back first.
  EXPECT_TRUE(f.first_failover(down, OutageFindings::Clock::time_point{}));
  f.link_went_down();
  EXPECT_TRUE(f.first_recovery());
  EXPECT_FALSE(f.port_recovery());
  EXPECT_FALSE(f.first_recovery());
  // The next outage: the watcher sees the port back first (its connections keep it out, or probe later).
  f.link_went_down();
  EXPECT_TRUE(f.first_failover(down + 30s, down + 29s));
  EXPECT_TRUE(f.port_recovery());
  EXPECT_FALSE(f.first_recovery());
  // A flap after it is news again.
  f.link_went_down();
  EXPECT_TRUE(f.port_recovery());
}

TEST(NetFailoverFindings, ALinkEventReadAfterTheFailoverIsTheSameOutage) {
  using namespace std::chrono_literals;
  OutageFindings f;
  const auto t = OutageFindings::Clock::time_point{} + 100s;
  // A connection's writes failed first; the port's own link-down event is read 50 ms later.
  EXPECT_TRUE(f.first_failover(t, OutageFindings::Clock::time_point{}));
  EXPECT_FALSE(f.first_failover(t + 1s, t + 50ms));
}

TEST(NetFailoverFindings, WithoutLinkEventsAFailureAMinuteLaterIsANewOutage) {
  using namespace std::chrono_literals;
  OutageFindings f;
  const OutageFindings::Clock::time_point never{};  // the peer's end fails: no link event here
  const auto t = never + 100s;
  EXPECT_TRUE(f.first_failover(t, never));
  EXPECT_FALSE(f.first_failover(t + 59s, never));
  EXPECT_TRUE(f.first_failover(t + kOutageSpan, never));
}

}  // namespace
}  // namespace railscope::net::verbs::failover
