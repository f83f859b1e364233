// SPDX-License-Identifier: Apache-2.0
// Which connections fail over (failover_policy.h), which QPs a port takes with it, and the receiver's
// rule that each data part is taken once (part_ledger.h take_part).
#include <gtest/gtest.h>

#include "plugin/net/verbs/failover/failover_policy.h"
#include "plugin/net/verbs/failover/part_ledger.h"

namespace railscope::net::verbs::failover {
namespace {

Eligibility eager_vnic(size_t nqps) {
  Eligibility e;
  e.offered = true;
  e.nqps = nqps;
  e.nlanes = 2;
  e.remote_devs = 2;
  return e;
}

TEST(NetFailoverPolicy, AnEagerConnectionOverTwoPortsFailsOver) {
  std::string why = "stale";
  EXPECT_TRUE(eligible(eager_vnic(2), &why));
  EXPECT_EQ(why, "");
  EXPECT_TRUE(eligible(eager_vnic(kMaxQps), &why));
}

TEST(NetFailoverPolicy, MoreQpsThanANoticeNamesIsRefusedAtConnectSayingSo) {
  std::string why;
  EXPECT_FALSE(eligible(eager_vnic(kMaxQps + 1), &why));
  EXPECT_NE(why.find("65 QPs"), std::string::npos) << why;
  Eligibility eight_ports = eager_vnic(128);
  eight_ports.nlanes = 8;
  EXPECT_FALSE(eligible(eight_ports, &why));
  EXPECT_NE(why.find("128 QPs"), std::string::npos) << why;
}

TEST(NetFailoverPolicy, TheOffSwitchAndTheReceiverDrivenProtocolFailFast) {
  std::string why;
  Eligibility off = eager_vnic(2);
  off.enabled = false;
  EXPECT_FALSE(eligible(off, &why));
  EXPECT_NE(why.find("RAILSCOPE_NET_FAILOVER=0"), std::string::npos) << why;
  Eligibility rd = eager_vnic(2);
  rd.offered = false;
  EXPECT_FALSE(eligible(rd, &why));
  EXPECT_NE(why.find("does not move traffic"), std::string::npos) << why;
}

TEST(NetFailoverPolicy, OnePortAtBothEndsHasNowhereToMoveAndNothingToSay) {
  Eligibility one = eager_vnic(4);
  one.nlanes = 1;
  one.remote_devs = 1;
  std::string why = "stale";
  EXPECT_FALSE(eligible(one, &why));
  EXPECT_EQ(why, "");
  one.remote_devs = 2;  // the peer's virtual NIC: a path can still fail and another remain
  EXPECT_TRUE(eligible(one, &why));
}

TEST(NetFailoverPolicy, APortTakesTheQpsStripedOverIt) {
  EXPECT_EQ(lane_qps(0, 2, 4), 0b0101u);
  EXPECT_EQ(lane_qps(1, 2, 4), 0b1010u);
  EXPECT_EQ(lane_qps(1, 2, 2), 0b10u);
  EXPECT_EQ(lane_qps(2, 4, 3), 0b100u);
  EXPECT_EQ(lane_qps(3, 4, 3), 0u);                     // a port with no QP of the connection
  EXPECT_EQ(lane_qps(0, 8, 128), 0x0101010101010101u);  // bits beyond the mask are never set
  EXPECT_EQ(lane_qps(0, 0, 4), 0u);
}

TEST(NetFailoverPolicy, OnlyAFailureThatLeavesTheRingQpAndAnotherIsMoved) {
  EXPECT_TRUE(movable(0b10, 2));
  EXPECT_TRUE(movable(0b1010, 4));
  EXPECT_FALSE(movable(0b01, 2));   // the ring's QP
  EXPECT_FALSE(movable(0b11, 2));   // nothing left
  EXPECT_FALSE(movable(0, 2));      // nothing failed
  EXPECT_FALSE(movable(0b100, 2));  // not a QP of the connection
  EXPECT_TRUE(movable(~uint64_t{1}, 65));
}

TEST(NetFailoverPolicy, EachPartIsTakenOnceAndOnlyIfTheMessageHasIt) {
  uint64_t have = 0;
  EXPECT_TRUE(take_part(&have, 1, 2));
  EXPECT_FALSE(take_part(&have, 1, 2)) << "a replayed copy of a part that arrived";
  EXPECT_EQ(have, 0b10u);
  EXPECT_FALSE(take_part(&have, 2, 2)) << "a part the message does not have";
  EXPECT_FALSE(take_part(&have, 64, 128)) << "beyond the mask";
  EXPECT_EQ(have, 0b10u);
  EXPECT_TRUE(take_part(&have, 0, 2));
  EXPECT_EQ(have, 0b11u);
  uint64_t all = 0;
  for (uint64_t p = 0; p < 64; ++p) EXPECT_TRUE(take_part(&all, p, 64));
  EXPECT_EQ(all, ~uint64_t{0});
}

// The parts of failed QPs go to the live ones round robin, whichever protocol moves them.
TEST(NetFailoverPolicy, LiveQpsCarryTheFailedPartsRoundRobin) {
  EXPECT_EQ(live_qp_for(1, 0b10, 2), 0u);  // two QPs, QP 1 failed: QP 0 carries it
  // Four QPs, QPs 1 and 3 failed: the live ones are 0 and 2.
  EXPECT_EQ(live_qp_for(0, 0b1010, 4), 0u);
  EXPECT_EQ(live_qp_for(1, 0b1010, 4), 2u);
  EXPECT_EQ(live_qp_for(3, 0b1010, 4), 2u);
  EXPECT_EQ(live_qp_for(5, 0b1010, 4), 2u);
  EXPECT_EQ(all_qps(3), 0b111u);
  EXPECT_EQ(all_qps(64), ~uint64_t{0});
  EXPECT_EQ(all_qps(100), ~uint64_t{0});
}

}  // namespace
}  // namespace railscope::net::verbs::failover
